package debugui

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/meshd/meshd/krt"
)

// TestBlockedTransformationKeepsTheUIAnswering blocks a transformation
// past krt's stall threshold: the graph and items answer from the last
// committed version and show the stall, and explain says the graph is
// busy instead of hanging.
func TestBlockedTransformationKeepsTheUIAnswering(t *testing.T) {
	g := blockedGraph(t)
	h := New(g)
	var sum GraphSummary
	for deadline := time.Now().Add(10 * time.Second); sum.Stalled == nil; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the graph summary showed no stall within 10s")
		}
		sum = getJSON[GraphSummary](t, h, "/debug/api/graph", http.StatusOK)
	}
	if sum.Stalled.Collection != "slow" || sum.Stalled.Key != "stuck" || sum.Stalled.Stack == "" {
		t.Errorf("stall = %+v, want slow's input stuck with a stack", sum.Stalled)
	}
	items := getJSON[ItemsPage](t, h, "/debug/api/collections/slow/items", http.StatusOK)
	if items.Total != 1 {
		t.Errorf("slow holds %d items during the stall, want the committed 1", items.Total)
	}
	if code, body := get(t, h, "/debug/api/explain?key=a"); code != http.StatusServiceUnavailable {
		t.Errorf("explain during the stall: status %d (%s), want 503", code, body)
	}
}

// blockedGraph returns a running graph whose collection "slow" holds input
// "a" and is stuck computing input "stuck"; cleanup releases and stops it.
func blockedGraph(t *testing.T) *krt.Graph {
	g := krt.NewGraph(krt.WithStallThreshold(10 * time.Millisecond))
	gate := make(chan struct{})
	in := krt.NewStatic[fxNamed](g, krt.WithName("inputs"))
	krt.NewCollection(g, in, func(_ krt.HandlerContext, n fxNamed) *fxNamed {
		if n.Key == "stuck" {
			<-gate
		}
		return &n
	}, krt.WithName("slow"))
	in.Set(fxNamed{Key: "a"})
	ctx, stop := context.WithCancel(context.Background())
	ran, wrote := make(chan error, 1), make(chan struct{})
	go func() { ran <- g.Run(ctx) }()
	go func() { defer close(wrote); in.Set(fxNamed{Key: "stuck"}) }()
	t.Cleanup(func() {
		close(gate)
		<-wrote
		stop()
		<-ran
	})
	return g
}
