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
	g := krt.NewGraph(krt.WithStallThreshold(10 * time.Millisecond))
	in := krt.NewStatic[fxNamed](g, krt.WithName("inputs"))
	release := make(chan struct{})
	krt.NewCollection(g, in, func(ctx krt.HandlerContext, n fxNamed) *fxNamed {
		if n.Key == "stuck" {
			<-release
		}
		return &n
	}, krt.WithName("slow"))
	in.Set(fxNamed{Key: "a"})
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- g.Run(ctx) }()
	defer func() { cancel(); <-runDone }()
	wrote := make(chan struct{})
	go func() { in.Set(fxNamed{Key: "stuck"}); close(wrote) }()
	defer func() { close(release); <-wrote }()

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
