package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshd/meshd/xds"
)

// XDSServer is what the xDS collector reads; *xds.Server implements it.
type XDSServer interface {
	Stats() xds.Stats
	Proxies() []xds.ProxyStatus
}

// XDSCollector is a prometheus.Collector over an xDS server's statistics
// and proxy registry, read at scrape time.
type XDSCollector struct {
	s XDSServer

	connected, stale, rejecting, streams, version                  *prometheus.Desc
	resources, pushes, sent, bytes, acks, nacks                    *prometheus.Desc
	duration, rounds, names                                        *prometheus.Desc
	denied, unknown, limits, mismatch, unauthenticated, unanswered *prometheus.Desc
	resumed, window, held                                          *prometheus.Desc
}

// unknownHelp describes meshd_xds_unknown_type_requests_total, whose type
// label is a type URL, not a short type name.
var unknownHelp = fmt.Sprintf("Requests for a type URL the server does not serve, ignored, by type URL (%d kept, the rest under %q).",
	xds.MaxUnknownTypeKeys, xds.OtherType)

// NewXDSCollector returns a collector of s's series. Per-type series carry
// the label type: lds, rds, cds or eds.
func NewXDSCollector(s XDSServer) *XDSCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("meshd_xds_"+name, help, labels, nil)
	}
	return &XDSCollector{
		s:               s,
		connected:       d("connected_proxies", "Open ADS streams."),
		stale:           d("stale_proxies", "Open streams that left a response unanswered (no ACK or NACK) longer than the server's limit: the debug UI's stale proxies."),
		rejecting:       d("rejecting_proxies", "Open streams whose last answer for some type is a NACK."),
		streams:         d("streams_total", "ADS streams ever opened."),
		version:         d("cache_version", "Graph version of the resources being served."),
		resources:       d("resources", "Resources served.", "type"),
		pushes:          d("pushes_total", "Discovery responses sent.", "type"),
		sent:            d("resources_sent_total", "Resources sent in discovery responses.", "type"),
		bytes:           d("sent_bytes_total", "Serialized bytes of the resources sent.", "type"),
		acks:            d("acks_total", "Responses acknowledged (ACK) by proxies.", "type"),
		nacks:           d("nacks_total", "Responses rejected (NACK) by proxies.", "type"),
		duration:        d("push_duration_seconds", "Time from building a discovery response to the end of its send."),
		rounds:          d("change_rounds_total", "Rounds of changes handed to streams (see --push-mode)."),
		names:           d("changed_names_total", "Resource names changed across all rounds."),
		denied:          d("denied_total", "Names asked for that exist but are hidden from the proxy's namespace.", "type"),
		unknown:         d("unknown_type_requests_total", unknownHelp, "type"),
		limits:          d("limit_exceeded_total", "Streams ended by a server limit; connections closed, for limit connections.", "limit"),
		mismatch:        d("identity_mismatch_total", "Streams refused: the node named another namespace than its client certificate."),
		unauthenticated: d("unauthenticated_streams_total", "Streams refused: no verified client certificate, and anonymous proxies are served nothing (--xds-anonymous)."),
		unanswered:      d("unanswered_total", "Times a proxy left a response unanswered longer than the server's limit (a stuck or vanished proxy)."),
		resumed:         d("resumed_total", "Streams whose first request of the type named the version of the current config (a proxy reconnecting, from this replica or another), answered with nothing.", "type"),
		window:          d("push_window_seconds", "Under --push-mode paced, the least time between two rounds of pushes after the last round: --push-debounce, or wider while proxies fall behind."),
		held:            d("held_pushes_total", "Under --push-mode paced, pushes a stream held because its proxy had not answered its last response."),
	}
}

// Describe implements prometheus.Collector.
func (c *XDSCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		c.connected, c.stale, c.rejecting, c.streams, c.version,
		c.resources, c.pushes, c.sent, c.bytes, c.acks, c.nacks,
		c.duration, c.rounds, c.names,
		c.denied, c.unknown, c.limits, c.mismatch, c.unauthenticated, c.unanswered, c.resumed,
		c.window, c.held,
	} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *XDSCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.s.Stats()
	var stale, rejecting int
	for _, p := range c.s.Proxies() {
		if !p.Connected {
			continue
		}
		if p.Stale {
			stale++
		}
		if p.Rejecting {
			rejecting++
		}
	}
	gauge := func(d *prometheus.Desc, v float64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
	}
	counter := func(d *prometheus.Desc, v uint64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), lv...)
	}
	gauge(c.connected, float64(st.ConnectedProxies))
	gauge(c.stale, float64(stale))
	gauge(c.rejecting, float64(rejecting))
	counter(c.streams, st.Streams)
	gauge(c.version, float64(st.CacheVersion))
	counter(c.rounds, st.ChangeRounds)
	counter(c.names, st.ChangedNames)
	// Every type appears in every per-type family, with zeros before the
	// first push, so rate() and alerts work from the start.
	for _, t := range []string{"lds", "rds", "cds", "eds"} {
		gauge(c.resources, float64(st.Resources[t]), t)
		counter(c.pushes, st.Pushes[t], t)
		counter(c.sent, st.ResourcesSent[t], t)
		counter(c.bytes, st.BytesSent[t], t)
		counter(c.acks, st.Acks[t], t)
		counter(c.nacks, st.Nacks[t], t)
		counter(c.denied, st.Denied[t], t)
		counter(c.resumed, st.Resumed[t], t)
	}
	for _, l := range xds.Limits {
		counter(c.limits, st.LimitExceeded[l], l)
	}
	// The server bounds the distinct type URLs it keeps, so this family
	// is bounded too.
	for t, n := range st.UnknownTypes {
		counter(c.unknown, n, t)
	}
	counter(c.mismatch, st.IdentityMismatch)
	counter(c.unauthenticated, st.Unauthenticated)
	counter(c.unanswered, st.Unanswered)
	gauge(c.window, st.PushWindowSeconds)
	counter(c.held, st.HeldPushes)
	count, buckets := cumulative(st.PushBuckets, xds.PushBounds)
	ch <- prometheus.MustNewConstHistogram(c.duration, count, st.PushSeconds, buckets)
}
