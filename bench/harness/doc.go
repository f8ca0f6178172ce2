// Package harness holds what meshd's benchmark programs share, in a
// module of its own that imports only the standard library, so that the
// comparison workloads under bench/ (Istio's krt, go-control-plane, the
// plain-map floor) can use it without pulling in meshd, and meshd without
// pulling in theirs:
//
//   - [github.com/meshd/meshd/bench/harness/workload]: the pods/services
//     workload every krt benchmark derives, its generator, and the checks
//     of its outputs;
//   - [github.com/meshd/meshd/bench/harness/metric]: the "metric value
//     unit" lines every benchmark prints, and the CPU and heap figures
//     they report;
//   - [github.com/meshd/meshd/bench/harness/child]: the parent's side of
//     the line protocol that drives xds/internal/bench's -child client
//     process.
//
// Each module that uses it names it with a replace directive (../harness
// or ./bench/harness); the root go.work lists it too.
package harness
