// Command bench runs the pods/services workload on the krt engine and prints
// one "metric value unit" line per figure.
//
// It is the meshd side of a side-by-side comparison with Istio's krt:
// bench/istio-krt runs the same workload on istio.io/istio/pkg/kube/krt,
// takes the same flags and prints the same metric names, and bench/limit
// computes the same outputs from scratch with plain maps (the floor), so
// the outputs join line by line (bench/compare.sh prints them side by
// side; docs/benchmarks.md has figures).
//
// The workload: N services svc-i in namespace ns-(i%10) selecting app=svc-i;
// M pods, pod j in service j%N; a mesh-config singleton. Workloads are derived
// per pod (the services selecting it, plus the trust domain of the mesh
// config); Endpoints per service (the sorted IPs of its workloads, found
// through an index of workloads by service). The phases are: initial build,
// memory, single-change latency, churn, an intermediate-state probe, a
// mesh-config change that recomputes every workload, a read-wait probe (Get
// on Services, back to back, during one more mesh-config change:
// read_wait_p50 and read_wait_p99). Then the same run, in a child process
// at GOMAXPROCS=1, gives initial_build, meshconfig_change, latency_cpu
// and churn figures with the suffix _gomaxprocs1. -parallelism sets
// krt.WithParallelism.
// Each phase ends with a check of every output against a from-scratch
// computation; a run that passes ends with "result PASS".
//
//	go run ./bench/krt -n 1000 -m 10000
//	go run ./bench/krt -n 1000 -m 10000 -cpuprofile cpu.out -profile-phase churn
package main
