package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// NewRegistry returns a registry holding the graph collector for g, the Go
// runtime and process collectors, and any extra collectors (such as the
// xDS collector). It panics if two collectors describe the same metric,
// which is a programming error.
func NewRegistry(g Describer, extra ...prometheus.Collector) *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(
		NewGraphCollector(g),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	for _, c := range extra {
		r.MustRegister(c)
	}
	return r
}
