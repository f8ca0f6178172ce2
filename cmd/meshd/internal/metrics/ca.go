package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshd/meshd/security/caserver"
)

// CA is what the CA collector reads: the signing service's counts and
// when the signing CA expires (zero: not known yet).
type CA interface {
	Stats() caserver.Stats
	Expiry() time.Time
	TrustedRoots() int
}

// CACollector is a prometheus.Collector of meshd's certificate
// authority, read at scrape time.
type CACollector struct {
	ca                             CA
	now                            func() time.Time
	issued, refused, expiry, roots *prometheus.Desc
}

// NewCACollector returns a collector of ca's series:
// meshd_ca_certificates_issued_total, meshd_ca_requests_refused_total
// (label reason, every reason always present),
// meshd_ca_root_expiry_seconds (seconds until the signing CA expires;
// absent until it is known) and meshd_ca_trusted_roots (two during a
// rotation).
func NewCACollector(ca CA) *CACollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("meshd_ca_"+name, help, labels, nil)
	}
	return &CACollector{
		ca:      ca,
		now:     time.Now,
		issued:  d("certificates_issued_total", "Workload certificates signed."),
		refused: d("requests_refused_total", "Certificate requests refused, by reason.", "reason"),
		expiry:  d("root_expiry_seconds", "Seconds until the signing CA certificate (or one above it) expires."),
		roots:   d("trusted_roots", "Roots in the trust bundle; more than one while a rotation is under way."),
	}
}

// Describe implements prometheus.Collector.
func (c *CACollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.issued, c.refused, c.expiry, c.roots} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *CACollector) Collect(ch chan<- prometheus.Metric) {
	st := c.ca.Stats()
	ch <- prometheus.MustNewConstMetric(c.issued, prometheus.CounterValue, float64(st.Issued))
	for _, r := range caserver.Reasons {
		ch <- prometheus.MustNewConstMetric(c.refused, prometheus.CounterValue, float64(st.Refused[r]), string(r))
	}
	if end := c.ca.Expiry(); !end.IsZero() {
		ch <- prometheus.MustNewConstMetric(c.expiry, prometheus.GaugeValue, end.Sub(c.now()).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(c.roots, prometheus.GaugeValue, float64(c.ca.TrustedRoots()))
}
