package main

import (
	"runtime"
	"time"

	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/bench/harness/workload"
)

// measureOneProc builds a second graph with GOMAXPROCS=1 and changes its
// mesh config: the figures that the default GOMAXPROCS's initial_build and
// meshconfig_change_commit are compared with, to see what a second core
// buys. Both are synchronous: the mesh-config figure is the Set call, which
// returns once every workload is recomputed.
func measureOneProc(c workload.Config) {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	svcs, pods := workload.Services(c.N), workload.Pods(c.N, c.M)
	runtime.GC()
	t0 := time.Now()
	gr := newInputs(svcs, pods)
	must(gr.derive(c.SvcLookup))
	metric.Emit("initial_build_gomaxprocs1", metric.MS(time.Since(t0)), "ms")
	if got := gr.workloads.Len(); got != c.M {
		metric.Fatalf("GOMAXPROCS=1 build: %d workloads, want %d", got, c.M)
	}
	if !c.MeshChange {
		return
	}
	const domain = "example.org"
	t0 = time.Now()
	gr.mesh.Set(workload.MeshConfig{TrustDomain: domain})
	metric.Emit("meshconfig_change_gomaxprocs1", metric.MS(time.Since(t0)), "ms")
	w, ok := gr.workloads.Get(workload.PodKey(0, c.N))
	if !ok || w.TrustDomain != domain {
		metric.Fatalf("GOMAXPROCS=1 mesh-config change: workload %s has trust domain %q", workload.PodKey(0, c.N), w.TrustDomain)
	}
}
