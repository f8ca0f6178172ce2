package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshd/meshd/cmd/meshd/internal/problem"
)

// ProblemsCollector is a prometheus.Collector of how many problems the
// sources report now: files that do not parse or validate, an invalid
// mesh config, watches that fail. It reads them at scrape time.
type ProblemsCollector struct {
	p        problem.Lister
	problems *prometheus.Desc
}

// NewProblemsCollector returns a collector of p's problems as the gauge
// meshd_source_problems, labeled severity: "error" (the source serves
// its last good objects) or "warning". Both series are always present, so
// an alert on the error series works from the start.
func NewProblemsCollector(p problem.Lister) *ProblemsCollector {
	return &ProblemsCollector{
		p: p,
		problems: prometheus.NewDesc("meshd_source_problems",
			"Problems the sources and routes report now; severity error: configuration is not served as written (a source keeps its last good objects, a route is rejected or fails part of its traffic).",
			[]string{"severity"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *ProblemsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.problems }

// Collect implements prometheus.Collector.
func (c *ProblemsCollector) Collect(ch chan<- prometheus.Metric) {
	var errs, warnings int
	for _, p := range c.p.Problems() {
		if p.Severity == problem.SeverityWarning {
			warnings++
		} else {
			errs++
		}
	}
	ch <- prometheus.MustNewConstMetric(c.problems, prometheus.GaugeValue, float64(errs), string(problem.SeverityError))
	ch <- prometheus.MustNewConstMetric(c.problems, prometheus.GaugeValue, float64(warnings), string(problem.SeverityWarning))
}
