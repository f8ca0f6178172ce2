// Command limit computes the outputs of bench/krt's pods/services workload
// once, from scratch, with plain maps and no engine: the floor an
// incremental engine's initial build is held against.
//
// From N services and M pods (the same generated inputs as bench/krt and
// bench/istio-krt) it derives one Workload per pod (the services selecting
// it, found through an index keyed by namespace and selector pair, and the
// trust domain) and one Endpoints per service (the sorted IPs of its
// workloads). It prints, in the "metric value unit" lines of the engine
// benchmarks, the time of that computation (initial_build, _cpu,
// _pods_per_s), the heap the inputs and outputs hold
// (heap_inuse_delta_per_pod), and the time of computing everything again
// for a new trust domain (meshconfig_change: what an engine does at best
// when every workload reads the mesh config). The outputs are checked
// against the generator's arithmetic; a run that passes ends with
// "result PASS".
//
// It is a module of its own, like bench/istio-krt, outside the root
// go.work; the workload and the metric lines come from bench/harness:
//
//	cd bench/limit && GOWORK=off go run . -n 1000 -m 10000
package main
