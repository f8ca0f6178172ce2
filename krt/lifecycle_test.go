package krt_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/krt/krttest"
)

// runGraph runs g until the returned stop is called; stop waits for Run.
func runGraph(t *testing.T, g *krt.Graph) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	return func() {
		cancel()
		select {
		case <-done:
		case <-time.After(krttest.Timeout):
			t.Fatal("Run did not return")
		}
	}
}

func TestRunStopsEveryHandlerGoroutine(t *testing.T) {
	// TestMain's goleak check fails the package if anything survives.
	g, in := newStatic[Num]()
	for range 5 {
		in.Register(func(krt.Batch[Num]) {})
	}
	stop := runGraph(t, g)
	in.Set(Num{"a", 1})
	stop()
	// Events committed while stopped are delivered by the next Run.
	got := make(chan krt.Batch[Num], 1)
	in.Register(func(b krt.Batch[Num]) { got <- b })
	in.Set(Num{"a", 2})
	stop = runGraph(t, g)
	defer stop()
	select {
	case b := <-got:
		if b.Events[0].New.N != 2 {
			t.Fatalf("batch %+v", b)
		}
	case <-time.After(krttest.Timeout):
		t.Fatal("queued batch not delivered after restart")
	}
}

func TestUnregisterStopsDelivery(t *testing.T) {
	g, in := newStatic[Num]()
	var mu sync.Mutex
	var n int
	reg := in.Register(func(krt.Batch[Num]) { mu.Lock(); n++; mu.Unlock() })
	after := make(chan struct{}, 10)
	other := in.Register(func(krt.Batch[Num]) { after <- struct{}{} })
	defer other.Unregister()
	stop := runGraph(t, g)
	defer stop()
	if err := reg.WaitVersion(context.Background(), in.Set(Num{"a", 1})); err != nil {
		t.Fatal(err)
	}
	<-after
	mu.Lock()
	if n != 1 {
		t.Fatalf("handler got %d batches, want 1", n)
	}
	mu.Unlock()
	reg.Unregister()
	reg.Unregister() // idempotent
	in.Set(Num{"a", 2})
	<-after
	mu.Lock()
	defer mu.Unlock()
	if n != 1 {
		t.Fatalf("unregistered handler got %d batches", n)
	}
}

func TestReplayThenLiveEvents(t *testing.T) {
	g := krt.NewGraph()
	krttest.Run(t, g)
	in := krttest.NewStatic(g, []Num{{"b", 2}, {"a", 1}})
	got := make(chan krt.Batch[Num], 10)
	reg := in.Register(func(b krt.Batch[Num]) { got <- b }, krt.WithReplay())
	defer reg.Unregister()
	events := krttest.Track(t, g, in, krt.WithReplay())
	events.Expect("add a", "add b")
	in.Set(Num{"c", 3})
	events.Expect("add c")
	first, second := <-got, <-got
	if len(first.Events) != 2 || first.Events[0].Key != "a" || first.Events[1].Key != "b" || first.Events[0].Type != krt.EventAdd {
		t.Fatalf("replay batch %+v", first)
	}
	if len(second.Events) != 1 || second.Events[0].Key != "c" || second.Version <= first.Version {
		t.Fatalf("live batch %+v after %+v", second, first)
	}
	if !reg.HasSynced() {
		t.Fatal("registration not synced after replay")
	}
}

func TestSyncedFollowsInputs(t *testing.T) {
	g, a := newStatic[Num](krt.WithUnsynced())
	b := krt.NewStatic[Num](g)
	b.Set(Num{"x", 1})
	derived := krt.NewCollection(g, b, func(ctx krt.HandlerContext, n Num) *Num {
		krt.Fetch(ctx, a) // reading an unsynced collection holds sync back
		return &n
	})
	if !b.HasSynced() || derived.HasSynced() {
		t.Fatalf("b synced=%v derived synced=%v", b.HasSynced(), derived.HasSynced())
	}
	a.MarkSynced()
	if !derived.WaitUntilSynced(nil) {
		t.Fatal("derived did not sync")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := krt.WaitSynced(ctx, a, b, derived); err != nil {
		t.Fatal(err)
	}
}

// TestHeldSnapshotDelaysNoWriter holds a Read while a writer commits: the
// write completes inside it, and reads through the held snapshot still see
// the version it was taken at, while plain reads see the new one.
func TestHeldSnapshotDelaysNoWriter(t *testing.T) {
	g, in := newStatic[Num]()
	doubled := krt.NewCollection(g, in, func(ctx krt.HandlerContext, n Num) *Num { return &Num{n.Key, 2 * n.N} })
	in.Set(Num{"a", 1})
	g.Read(func(s *krt.Snapshot) {
		wrote := make(chan uint64)
		go func() { wrote <- in.Set(Num{"a", 2}) }()
		var v uint64
		select {
		case v = <-wrote:
		case <-time.After(krttest.Timeout):
			t.Fatal("a writer waited for a held snapshot")
		}
		if v != s.Version()+1 {
			t.Errorf("write committed version %d, snapshot holds %d", v, s.Version())
		}
		if got, _ := in.At(s).Get("a"); got.N != 1 {
			t.Errorf("the held snapshot saw the later write: %v", got)
		}
		if got, _ := doubled.At(s).Get("a"); got.N != 2 {
			t.Errorf("the held snapshot's derived item changed: %v", got)
		}
		if got, _ := doubled.Get("a"); got.N != 4 {
			t.Errorf("a plain Get after the commit saw %v, want the new version", got)
		}
	})
}

func TestBusyFindsABlockedTransformation(t *testing.T) {
	g, in := newStatic[Num]()
	block := make(chan struct{})
	krt.NewCollection(g, in, func(ctx krt.HandlerContext, n Num) *Num {
		if n.N == 1 {
			<-block
		}
		return &n
	}, krt.WithName("slow"))
	done := make(chan struct{})
	go func() { in.Set(Num{"a", 1}); close(done) }()
	deadline := time.Now().Add(krttest.Timeout)
	for {
		b := g.Busy()
		if b.Busy && b.Collection == "slow" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Busy = %+v", b)
		}
		time.Sleep(time.Millisecond)
	}
	close(block)
	<-done
	if b := g.Busy(); b.Busy {
		t.Fatalf("still busy after the transaction: %+v", b)
	}
}
