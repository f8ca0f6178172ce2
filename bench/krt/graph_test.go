package main

import (
	"context"
	"slices"
	"testing"

	"github.com/meshd/meshd/bench/harness/workload"
	"github.com/meshd/meshd/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

// TestGraphMatchesScratch checks the workload graph against the
// from-scratch computation after a build, a pod change, a pod move between
// services and a mesh-config change, for every service lookup.
func TestGraphMatchesScratch(t *testing.T) {
	for _, mode := range []string{"ns", "selector", "none"} {
		t.Run(mode, func(t *testing.T) {
			const n, m = 7, 40
			gr := newInputs(workload.Services(n), workload.Pods(n, m))
			if err := gr.derive(mode); err != nil {
				t.Fatal(err)
			}
			if err := verify(gr, n, m, "cluster.local"); err != nil {
				t.Fatalf("after build: %v", err)
			}
			p, ok := gr.pods.Get(workload.PodKey(3, n))
			if !ok {
				t.Fatalf("pod %s missing", workload.PodKey(3, n))
			}
			p.IP = workload.FreshIP()
			gr.pods.Set(p)
			if err := verify(gr, n, m, "cluster.local"); err != nil {
				t.Fatalf("after an IP change: %v", err)
			}
			ep, _ := gr.endpoints.Get(workload.ServiceKey(3))
			if !slices.Contains(ep.IPs, p.IP) {
				t.Fatalf("endpoints %s lack the new ip %s: %v", workload.ServiceKey(3), p.IP, ep.IPs)
			}
			gr.mesh.Set(workload.MeshConfig{TrustDomain: "example.org"})
			if err := verify(gr, n, m, "example.org"); err != nil {
				t.Fatalf("after a mesh-config change: %v", err)
			}
			if err := verify(gr, n, m, "cluster.local"); err == nil {
				t.Fatal("verify accepted a stale trust domain")
			}
		})
	}
}

func TestServiceLookupUnknown(t *testing.T) {
	gr := newInputs(nil, nil)
	if err := gr.derive("bogus"); err == nil {
		t.Fatal("derive accepted an unknown -svc-lookup")
	}
}

// TestInlineDeliveryFlag: with -handler-delivery inline, the tracker has
// seen a change's endpoints by the time its Set returns.
func TestInlineDeliveryFlag(t *testing.T) {
	defer func(old string) { handlerDelivery = old }(handlerDelivery)
	handlerDelivery = "inline"
	const n, m = 5, 20
	gr := newInputs(workload.Services(n), workload.Pods(n, m))
	if err := gr.derive("ns"); err != nil {
		t.Fatal(err)
	}
	tr := workload.NewTracker()
	reg := gr.endpoints.Register(observe(tr), deliveryOptions()...)
	defer reg.Unregister()
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- gr.g.Run(ctx) }()
	defer func() { cancel(); <-runDone }()
	for i := range 3 {
		p, _ := gr.pods.Get(workload.PodKey(i, n))
		p.IP = workload.FreshIP()
		tr.Expect(p.IP, "")
		done := tr.Arm()
		v := gr.pods.Set(p)
		if i == 0 { // the first batch may be the Run's goroutine's, at its start
			if err := reg.WaitVersion(ctx, v); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case <-done:
		default:
			t.Fatalf("change %d: Set returned before the inline handler saw %s", i, p.IP)
		}
	}
}
