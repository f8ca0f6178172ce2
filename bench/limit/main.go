package main

import (
	"flag"
	"runtime"
	"time"

	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/bench/harness/workload"
)

func main() {
	n := flag.Int("n", 1000, "number of services")
	m := flag.Int("m", 10000, "number of pods")
	flag.Parse()
	if *n <= 0 || *m < *n {
		metric.Fatalf("-n, -m: need 0 < n <= m")
	}
	run(*n, *m)
}

func run(n, m int) {
	metric.Emit("param_services", n, "count")
	metric.Emit("param_pods", m, "count")
	metric.Emit("param_gomaxprocs", runtime.GOMAXPROCS(0), "count")
	baseInuse, baseAlloc := metric.Heap()
	svcs, pods := workload.Services(n), workload.Pods(n, m)

	c0, t0 := metric.CPU(), time.Now()
	out := compute(svcs, pods, "cluster.local")
	dur, cpu := time.Since(t0), metric.CPU()-c0
	metric.Emit("initial_build", metric.MS(dur), "ms")
	metric.Emit("initial_build_pods_per_s", float64(m)/dur.Seconds(), "pods/s")
	metric.Emit("initial_build_cpu", metric.MS(cpu), "ms")

	inuse, alloc := metric.Heap()
	metric.Emit("heap_inuse_delta_per_pod", float64(int64(inuse)-int64(baseInuse))/float64(m), "bytes/pod")
	metric.Emit("heap_alloc_delta_per_pod", float64(int64(alloc)-int64(baseAlloc))/float64(m), "bytes/pod")
	if err := verify(out, n, m, "cluster.local"); err != nil {
		metric.Fatalf("VERIFY FAILED (initial build): %v", err)
	}

	c0, t0 = metric.CPU(), time.Now()
	out = compute(svcs, pods, "example.org")
	dur, cpu = time.Since(t0), metric.CPU()-c0
	metric.Emit("meshconfig_change", metric.MS(dur), "ms")
	metric.Emit("meshconfig_workloads_per_s", float64(m)/dur.Seconds(), "workloads/s")
	metric.Emit("meshconfig_change_cpu", metric.MS(cpu), "ms")
	if err := verify(out, n, m, "example.org"); err != nil {
		metric.Fatalf("VERIFY FAILED (recompute): %v", err)
	}
	metric.Emit("result", "PASS", "status")
}
