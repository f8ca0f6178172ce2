package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// RouteProblem is one false condition of one parent of a route.
type RouteProblem struct {
	// Kind is "HTTPRoute" or "GRPCRoute".
	Kind string
	// Condition is "Accepted" or "ResolvedRefs"; Reason its reason, such
	// as "BackendNotFound".
	Condition, Reason string
}

// RouteProblemsCollector is a prometheus.Collector of the routes that are
// rejected or partly invalid now. It reads them at scrape time.
type RouteProblemsCollector struct {
	list     func() []RouteProblem
	problems *prometheus.Desc
}

// NewRouteProblemsCollector returns a collector of the gauge
// meshd_route_problems: how many route parents have a false condition,
// labeled kind, condition and reason. list is called once a scrape and
// must be safe for concurrent use. A series exists only while its count
// is positive, as a reason is known only once a route has it.
func NewRouteProblemsCollector(list func() []RouteProblem) *RouteProblemsCollector {
	return &RouteProblemsCollector{
		list: list,
		problems: prometheus.NewDesc("meshd_route_problems",
			"Route parents with a false condition now: Accepted (the route is not in effect for that parent) or ResolvedRefs (requests for an unresolved backend fail).",
			[]string{"kind", "condition", "reason"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *RouteProblemsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.problems }

// Collect implements prometheus.Collector.
func (c *RouteProblemsCollector) Collect(ch chan<- prometheus.Metric) {
	counts := map[RouteProblem]int{}
	for _, p := range c.list() {
		counts[p]++
	}
	for p, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.problems, prometheus.GaugeValue, float64(n), p.Kind, p.Condition, p.Reason)
	}
}
