// Package metrics exports meshd's state as Prometheus metrics.
//
// Nothing here keeps counters of its own: the collectors read the krt
// graph's introspection ([krt.Graph.Describe]) and the xDS server's
// statistics at scrape time and turn them into const metrics, so the engine
// and the xDS server stay free of any Prometheus dependency and a scrape
// always reflects one consistent description.
//
// [NewRegistry] assembles the registry the binary serves on /metrics: the
// graph collector, the xDS collector (when an xDS server is given), and the
// Go runtime and process collectors.
package metrics
