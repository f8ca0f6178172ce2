// Command istio-krt runs bench/krt's pods/services workload on Istio's
// krt (istio.io/istio/pkg/kube/krt) and prints one "metric value unit"
// line per figure, under the same metric names and with the same flags as
// bench/krt, so that the two outputs compare line by line
// (bench/compare.sh prints them side by side).
//
// It is a module of its own, outside the root go.work, so that meshd never
// depends on Istio; build it with GOWORK=off. The first build downloads
// and compiles Istio (minutes). The workload's types and generator, the
// handlers' bookkeeping and the checks of the outputs are bench/krt's
// too, from bench/harness, which imports only the standard library.
//
// The workload: N services svc-i in namespace ns-(i%10) selecting
// app=svc-i; M pods, pod j in service j%N; a mesh-config singleton.
// Workloads are derived per pod (the services selecting it, found through a
// namespace index and a selector filter as Istio's own controllers do, plus
// the trust domain of the mesh config); Endpoints per service (the sorted
// IPs of its workloads, through an index of workloads by service). The
// phases are those of bench/krt: initial build, memory, single-change
// latency, churn, an intermediate-state probe, and a mesh-config change
// that recomputes every workload. Istio derives asynchronously, so each
// phase ends when a registered handler has seen the expected state, and
// then checks every output against a from-scratch computation, retrying
// while changes still propagate (verify_*_retries). A run that passes ends
// with "result PASS".
//
//	cd bench/istio-krt && GOWORK=off go run . -n 1000 -m 10000
package main
