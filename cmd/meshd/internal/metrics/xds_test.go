package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/meshd/meshd/xds"
)

type fakeXDS struct {
	stats   xds.Stats
	proxies []xds.ProxyStatus
}

func (f fakeXDS) Stats() xds.Stats           { return f.stats }
func (f fakeXDS) Proxies() []xds.ProxyStatus { return f.proxies }

// busyXDS is a server whose every counter has moved: two pushes in the
// fastest bucket, one in bucket 3 and one past the last bound, and three
// proxies, one of them gone.
func busyXDS() fakeXDS {
	buckets := make([]uint64, len(xds.PushBounds)+1)
	buckets[0], buckets[3], buckets[len(buckets)-1] = 2, 1, 1
	f := fakeXDS{
		stats: xds.Stats{
			ConnectedProxies:  2,
			Streams:           5,
			CacheVersion:      42,
			Resources:         map[string]int{"cds": 4, "eds": 4},
			Pushes:            map[string]uint64{"cds": 3, "eds": 1},
			BytesSent:         map[string]uint64{"cds": 1000},
			Acks:              map[string]uint64{"cds": 2},
			Nacks:             map[string]uint64{"cds": 1},
			PushBuckets:       buckets,
			PushSeconds:       12.5,
			PushWindowSeconds: 0.2,
			HeldPushes:        9,
			Denied:            map[string]uint64{"eds": 7},
			UnknownTypes:      map[string]uint64{"type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret": 3, xds.OtherType: 2},
			LimitExceeded:     map[string]uint64{xds.LimitSubscribedNames: 4, xds.LimitConnections: 1},
			IdentityMismatch:  6,
			Unauthenticated:   8,
			Unanswered:        5,
			Resumed:           map[string]uint64{"lds": 2},
		},
		proxies: []xds.ProxyStatus{
			{NodeID: "a", Connected: true, Stale: true},
			{NodeID: "b", Connected: true, Rejecting: true},
			{NodeID: "c", Connected: false, Stale: true, Rejecting: true}, // gone: not counted
			{NodeID: "d", Connected: true, Behind: true},                  // behind, not stale yet: not counted
		},
	}
	return f
}

// wantXDSMetrics is what NewXDSCollector(busyXDS()) exports, but for the
// push histogram, which TestXDSPushHistogram checks.
const wantXDSMetrics = `
# HELP meshd_xds_connected_proxies Open ADS streams.
# TYPE meshd_xds_connected_proxies gauge
meshd_xds_connected_proxies 2
# HELP meshd_xds_stale_proxies Open streams that left a response unanswered (no ACK or NACK) longer than the server's limit: the debug UI's stale proxies.
# TYPE meshd_xds_stale_proxies gauge
meshd_xds_stale_proxies 1
# HELP meshd_xds_rejecting_proxies Open streams whose last answer for some type is a NACK.
# TYPE meshd_xds_rejecting_proxies gauge
meshd_xds_rejecting_proxies 1
# HELP meshd_xds_nacks_total Responses rejected (NACK) by proxies.
# TYPE meshd_xds_nacks_total counter
meshd_xds_nacks_total{type="cds"} 1
meshd_xds_nacks_total{type="eds"} 0
meshd_xds_nacks_total{type="lds"} 0
meshd_xds_nacks_total{type="rds"} 0
# HELP meshd_xds_sent_bytes_total Serialized bytes of the resources sent.
# TYPE meshd_xds_sent_bytes_total counter
meshd_xds_sent_bytes_total{type="cds"} 1000
meshd_xds_sent_bytes_total{type="eds"} 0
meshd_xds_sent_bytes_total{type="lds"} 0
meshd_xds_sent_bytes_total{type="rds"} 0
# HELP meshd_xds_denied_total Names asked for that exist but are hidden from the proxy's namespace.
# TYPE meshd_xds_denied_total counter
meshd_xds_denied_total{type="cds"} 0
meshd_xds_denied_total{type="eds"} 7
meshd_xds_denied_total{type="lds"} 0
meshd_xds_denied_total{type="rds"} 0
# HELP meshd_xds_unknown_type_requests_total Requests for a type URL the server does not serve, ignored, by type URL (16 kept, the rest under "other").
# TYPE meshd_xds_unknown_type_requests_total counter
meshd_xds_unknown_type_requests_total{type="other"} 2
meshd_xds_unknown_type_requests_total{type="type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret"} 3
# HELP meshd_xds_limit_exceeded_total Streams ended by a server limit; connections closed, for limit connections.
# TYPE meshd_xds_limit_exceeded_total counter
meshd_xds_limit_exceeded_total{limit="connections"} 1
meshd_xds_limit_exceeded_total{limit="message_size"} 0
meshd_xds_limit_exceeded_total{limit="subscribed_names"} 4
# HELP meshd_xds_identity_mismatch_total Streams refused: the node named another namespace than its client certificate.
# TYPE meshd_xds_identity_mismatch_total counter
meshd_xds_identity_mismatch_total 6
# HELP meshd_xds_unauthenticated_streams_total Streams refused: no verified client certificate, and anonymous proxies are served nothing (--xds-anonymous).
# TYPE meshd_xds_unauthenticated_streams_total counter
meshd_xds_unauthenticated_streams_total 8
# HELP meshd_xds_unanswered_total Times a proxy left a response unanswered longer than the server's limit (a stuck or vanished proxy).
# TYPE meshd_xds_unanswered_total counter
meshd_xds_unanswered_total 5
# HELP meshd_xds_resumed_total Streams whose first request of the type named the version of the current config (a proxy reconnecting, from this replica or another), answered with nothing.
# TYPE meshd_xds_resumed_total counter
meshd_xds_resumed_total{type="cds"} 0
meshd_xds_resumed_total{type="eds"} 0
meshd_xds_resumed_total{type="lds"} 2
meshd_xds_resumed_total{type="rds"} 0
# HELP meshd_xds_push_window_seconds Under --push-mode paced, the least time between two rounds of pushes after the last round: --push-debounce, or wider while proxies fall behind.
# TYPE meshd_xds_push_window_seconds gauge
meshd_xds_push_window_seconds 0.2
# HELP meshd_xds_held_pushes_total Under --push-mode paced, pushes a stream held because its proxy had not answered its last response.
# TYPE meshd_xds_held_pushes_total counter
meshd_xds_held_pushes_total 9
`

// wantXDSNames are the families wantXDSMetrics holds.
var wantXDSNames = []string{"meshd_xds_connected_proxies", "meshd_xds_stale_proxies", "meshd_xds_rejecting_proxies",
	"meshd_xds_nacks_total", "meshd_xds_sent_bytes_total", "meshd_xds_denied_total",
	"meshd_xds_unknown_type_requests_total", "meshd_xds_limit_exceeded_total", "meshd_xds_identity_mismatch_total",
	"meshd_xds_unauthenticated_streams_total", "meshd_xds_unanswered_total", "meshd_xds_resumed_total",
	"meshd_xds_push_window_seconds", "meshd_xds_held_pushes_total"}

func TestXDSCollector(t *testing.T) {
	if err := testutil.CollectAndCompare(NewXDSCollector(busyXDS()), strings.NewReader(wantXDSMetrics), wantXDSNames...); err != nil {
		t.Error(err)
	}
}

// TestXDSPushHistogram checks the push histogram: 4 pushes, cumulative
// buckets.
func TestXDSPushHistogram(t *testing.T) {
	mfs, err := NewRegistry(fakeGraph{}, NewXDSCollector(busyXDS())).Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "meshd_xds_push_duration_seconds" {
			continue
		}
		h := mf.GetMetric()[0].GetHistogram()
		if h.GetSampleCount() != 4 || h.GetSampleSum() != 12.5 {
			t.Errorf("histogram count/sum = %d/%v, want 4/12.5", h.GetSampleCount(), h.GetSampleSum())
		}
		if b := h.GetBucket()[3]; b.GetUpperBound() != xds.PushBounds[3] || b.GetCumulativeCount() != 3 {
			t.Errorf("bucket 3 = %v", b)
		}
		return
	}
	t.Error("no push duration histogram")
}

func TestXDSCollectorLint(t *testing.T) {
	problems, err := testutil.CollectAndLint(NewXDSCollector(fakeXDS{stats: xds.Stats{
		PushBuckets:   make([]uint64, len(xds.PushBounds)+1),
		UnknownTypes:  map[string]uint64{"type.googleapis.com/x.Y": 1},
		LimitExceeded: map[string]uint64{xds.LimitMessageSize: 1},
	}}))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint %s: %s", p.Metric, p.Text)
	}
}
