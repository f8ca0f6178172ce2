package main

import (
	"context"
	"runtime"
	"time"

	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/bench/harness/workload"
)

// measureOneProc builds a second graph with GOMAXPROCS=1 and changes its
// mesh config: the figures that the default GOMAXPROCS's initial_build and
// meshconfig_change are compared with, to see what a second core buys.
// Each is measured as its counterpart is: the build from filling the
// inputs until both derived collections are synced, and the mesh-config
// change from the Set call until a registered handler, delivered to by a
// running graph, has every recomputed workload.
func measureOneProc(c workload.Config) {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	svcs, pods := workload.Services(c.N), workload.Pods(c.N, c.M)
	runtime.GC()
	t0 := time.Now()
	gr := newInputs(svcs, pods)
	must(gr.derive(c.SvcLookup))
	if !gr.workloads.HasSynced() || !gr.endpoints.HasSynced() {
		metric.Fatalf("GOMAXPROCS=1 build: derived collections not synced after construction")
	}
	metric.Emit("initial_build_gomaxprocs1", metric.MS(time.Since(t0)), "ms")
	if got := gr.workloads.Len(); got != c.M {
		metric.Fatalf("GOMAXPROCS=1 build: %d workloads, want %d", got, c.M)
	}
	if !c.MeshChange {
		return
	}
	const domain = "example.org"
	wc := &workload.Counter{}
	reg := gr.workloads.Register(count(wc))
	defer reg.Unregister()
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- gr.g.Run(ctx) }()
	defer func() { cancel(); <-runDone }()
	done := wc.Arm(domain, c.M)
	t0 = time.Now()
	gr.mesh.Set(workload.MeshConfig{TrustDomain: domain})
	select {
	case <-done:
	case <-time.After(c.Timeout):
		metric.Fatalf("GOMAXPROCS=1: timeout after %v waiting for %d workload updates", c.Timeout, c.M)
	}
	metric.Emit("meshconfig_change_gomaxprocs1", metric.MS(time.Since(t0)), "ms")
	w, ok := gr.workloads.Get(workload.PodKey(0, c.N))
	if !ok || w.TrustDomain != domain {
		metric.Fatalf("GOMAXPROCS=1 mesh-config change: workload %s has trust domain %q", workload.PodKey(0, c.N), w.TrustDomain)
	}
}
