package krt_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/krt/krttest"
)

// cluster is one remote cluster's collections, in a sub-graph of its own.
type cluster struct {
	sub  *krt.SubGraph
	pods krt.Static[Pod]
	up   krt.Collection[Pod] // the pods with an IP
}

func newCluster(g *krt.Graph, name string, pods ...Pod) cluster {
	sub := g.NewSubGraph(name)
	c := cluster{sub: sub, pods: krt.NewStatic[Pod](sub, krt.WithName(name+"/pods"))}
	c.pods.Set(pods...)
	c.up = krt.NewCollection(sub, c.pods, func(ctx krt.HandlerContext, p Pod) *Pod {
		if p.IP == "" {
			return nil
		}
		return &p
	}, krt.WithName(name+"/up"))
	return c
}

func TestNestedJoinFollowsCollectionsAsTheyComeAndGo(t *testing.T) {
	g := krt.NewGraph()
	krttest.Run(t, g)
	clusters := krt.NewStatic[krt.Collection[Pod]](g, krt.WithName("clusters"))
	all := krt.NestedJoin(g, clusters, krt.WithName("all-pods"))
	events := krttest.Track(t, g, all)

	east := newCluster(g, "east", Pod{Name: "a", Namespace: "x", IP: "10.0.0.1"}, Pod{Name: "b", Namespace: "x"})
	clusters.Set(east.up)
	krttest.ExpectKeys(t, all, "x/a")
	west := newCluster(g, "west", Pod{Name: "a", Namespace: "x", IP: "10.1.0.1"}, Pod{Name: "c", Namespace: "x", IP: "10.1.0.3"})
	clusters.Set(west.up)
	// x/a is in both: the collection under the smaller key ("east/up") wins.
	krttest.ExpectList(t, all, Pod{Name: "a", Namespace: "x", IP: "10.0.0.1"}, Pod{Name: "c", Namespace: "x", IP: "10.1.0.3"})
	events.Expect("add x/a", "add x/c")

	east.pods.Set(Pod{Name: "b", Namespace: "x", IP: "10.0.0.2"}) // a change inside a cluster
	events.Expect("add x/b")

	clusters.Delete("east/up")
	east.sub.Stop()
	krttest.ExpectList(t, all, Pod{Name: "a", Namespace: "x", IP: "10.1.0.1"}, Pod{Name: "c", Namespace: "x", IP: "10.1.0.3"})
	events.Expect("update x/a", "delete x/b")
	for _, c := range g.Describe().Collections {
		if c.Name == "east/pods" || c.Name == "east/up" {
			t.Fatalf("stopped collection %q still described", c.Name)
		}
	}
	if east.up.Len() != 0 {
		t.Fatal("a stopped collection still holds items")
	}
	west.pods.Set(Pod{Name: "d", Namespace: "x", IP: "10.1.0.4"}) // the rest of the graph runs on
	events.Expect("add x/d")
}

func TestStopEmptiesWhatOutsideReads(t *testing.T) {
	g := krt.NewGraph()
	c := newCluster(g, "east", Pod{Name: "a", Namespace: "x", IP: "10.0.0.1"})
	count := krt.NewSingleton(g, func(ctx krt.HandlerContext) *Num {
		return &Num{Key: "n", N: len(krt.Fetch(ctx, c.up))}
	})
	if n, _ := count.Value(); n.N != 1 {
		t.Fatalf("count %d before Stop", n.N)
	}
	c.sub.Stop()
	c.sub.Stop() // idempotent
	if n, _ := count.Value(); n.N != 0 {
		t.Fatalf("count %d after Stop, want 0: a reader outside saw no deletes", n.N)
	}
	if msg := panicOf(func() { c.pods.Set(Pod{Name: "b", Namespace: "x"}) }); msg == "" {
		t.Fatal("a write to a stopped collection was accepted")
	}
	if msg := panicOf(func() { c.up.Register(func(krt.Batch[Pod]) {}) }); msg == "" {
		t.Fatal("a handler was registered on a stopped collection")
	}
	if msg := panicOf(func() { krt.NewStatic[Pod](c.sub) }); msg == "" {
		t.Fatal("a collection was created in a stopped sub-graph")
	}
}

// TestSubGraphCyclesFreeEverything adds and removes a 1,000-item
// sub-graph 1,000 times (fewer with -short or -race) while the graph
// runs, with a handler and an index in it, and finds goroutines and heap
// back where they started.
func TestSubGraphCyclesFreeEverything(t *testing.T) {
	cycles := 1000
	switch {
	case testing.Short():
		cycles = 50
	case raceEnabled: // 1,000 cycles take 140 s under -race
		cycles = 200
	}
	g := krt.NewGraph()
	krttest.Run(t, g)
	clusters := krt.NewStatic[krt.Collection[Pod]](g)
	all := krt.NestedJoin(g, clusters)
	pods := make([]Pod, 1000)
	for i := range pods {
		pods[i] = Pod{Name: fmt.Sprint(i), Namespace: "x", IP: fmt.Sprint("10.0.", i/256, ".", i%256)}
	}
	cycle := func(i int) {
		c := newCluster(g, fmt.Sprint("c", i), pods...)
		krt.NewIndex(c.up, "ip", func(p Pod) []string { return []string{p.IP} })
		reg := c.up.Register(func(krt.Batch[Pod]) {})
		if err := reg.WaitVersion(t.Context(), clusters.Set(c.up)); err != nil {
			t.Fatal(err)
		}
		if all.Len() != len(pods) {
			t.Fatalf("cycle %d: joined %d pods", i, all.Len())
		}
		clusters.Delete(krt.KeyOf(clusters, c.up))
		c.sub.Stop()
	}
	// The graph runs and no sub-graph exists: the state every stopped
	// sub-graph returns to.
	handlers := handlerGoroutines()
	cycle(-1) // warm up: first-use allocations count as baseline
	// A stopped sub-graph's handler goroutine ends on its own time: wait
	// for the warm-up's before counting, or it would be counted in the
	// baseline and could hide the last cycle's (and its heap) at the end.
	waitHandlers(t, handlers, "after the warm-up")
	goroutines, heap := runtime.NumGoroutine(), heapInUse()
	for i := range cycles {
		cycle(i)
	}
	if all.Len() != 0 || len(g.Describe().Collections) != 2 {
		t.Fatalf("after the cycles: %d joined pods, %d collections", all.Len(), len(g.Describe().Collections))
	}
	waitHandlers(t, handlers, "after the cycles")
	if leaked := leakedSince(goroutines); leaked > 0 {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines more than before the cycles:\n%s", leaked, buf[:runtime.Stack(buf, true)])
	}
	grown := heapInUse() - heap
	if grown > 1<<20 {
		t.Fatalf("heap grew by %d bytes over %d cycles", grown, cycles)
	}
	t.Logf("%d cycles: heap %+d bytes, goroutines %d before and after", cycles, grown, goroutines)
}

// handlerGoroutines returns how many goroutines run a graph's handlers.
func handlerGoroutines() int {
	n := 0
	for _, s := range otherGoroutines() {
		if strings.Contains(s, "krt.(*Graph).startHandlerLocked") {
			n++
		}
	}
	return n
}

// waitHandlers waits up to 20 s for the handler goroutines to be back to
// want, and fails t with their stacks if they are not.
func waitHandlers(t *testing.T, want int, when string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for handlerGoroutines() > want {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d handler goroutines after 20 s, want %d:\n%s",
				when, handlerGoroutines(), want, strings.Join(otherGoroutines(), "\n\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// leakedSince waits up to 10 s for the goroutine count to fall back to
// baseline: on a loaded machine a stopped sub-graph's goroutines may
// still be on their way out when the cycles end.
func leakedSince(baseline int) int {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if runtime.NumGoroutine() <= baseline {
			return 0
		}
		time.Sleep(10 * time.Millisecond)
	}
	return runtime.NumGoroutine() - baseline
}
