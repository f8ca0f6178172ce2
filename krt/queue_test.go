package krt_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshd/meshd/krt"
)

// holdGraph runs a transaction that blocks until the returned release is
// called, so that updates queued meanwhile wait for the write lock.
func holdGraph(g *krt.Graph, in krt.Static[Num]) (release func()) {
	started, unblock, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		g.Update(func(tx *krt.Txn) {
			in.In(tx).Set(Num{"held", 1})
			close(started)
			<-unblock
		})
	}()
	<-started
	return func() { close(unblock); <-done }
}

func TestUpdateLaterCommitsInOrderAndInBatches(t *testing.T) {
	g, in := newStatic[Num]()
	release := holdGraph(g, in)
	const n = 500
	for i := range n {
		g.UpdateLater(func(tx *krt.Txn) {
			in.In(tx).Set(Num{"k", i}, Num{fmt.Sprint("u", i), i})
		})
	}
	before := g.Version()
	release()
	v, err := g.Flush(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The held transaction, then at most two batches: what the committer
	// took before it waited for the lock, and the rest.
	if commits := v - before; commits < 2 || commits > 3 {
		t.Errorf("%d updates committed in %d transactions, want the held one and 1 or 2 batches", n, commits)
	}
	if got, _ := in.Get("k"); got.N != n-1 {
		t.Errorf("k = %d after the queue, want the last queued write, %d", got.N, n-1)
	}
	if got := in.Len(); got != n+2 {
		t.Errorf("%d items, want %d", got, n+2)
	}
}

func TestUpdateLaterDropsOnlyThePanickingUpdate(t *testing.T) {
	var logs bytes.Buffer
	g := krt.NewGraph(krt.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	in := krt.NewStatic[Num](g)
	release := holdGraph(g, in)
	g.UpdateLater(func(tx *krt.Txn) { in.In(tx).Set(Num{"a", 1}) })
	g.UpdateLater(func(tx *krt.Txn) {
		in.In(tx).Set(Num{"bad", 1})
		panic("a bug in a writer")
	})
	g.UpdateLater(func(tx *krt.Txn) { in.In(tx).Set(Num{"c", 1}) })
	release()
	if _, err := g.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]bool{"a": true, "bad": false, "c": true} {
		if _, ok := in.Get(key); ok != want {
			t.Errorf("Get(%q) found %v, want %v", key, ok, want)
		}
	}
	if out := logs.String(); !strings.Contains(out, "queued update panicked") || !strings.Contains(out, "a bug in a writer") {
		t.Errorf("log lacks the dropped update and its panic:\n%s", out)
	}
	if q := g.Describe().Queue; q.Dropped != 1 || q.Committed != 2 || q.Waiting != 0 || q.Batches == 0 {
		t.Errorf("Describe().Queue = %+v, want 2 committed, 1 dropped, none waiting", q)
	}
}

func TestFlushReturnsWhenItsContextEnds(t *testing.T) {
	g, in := newStatic[Num]()
	release := holdGraph(g, in)
	g.UpdateLater(func(tx *krt.Txn) { in.In(tx).Set(Num{"a", 1}) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := g.Flush(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Flush while the graph is held = %v, want the deadline", err)
	}
	release()
	if _, err := g.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := in.Get("a"); !ok {
		t.Error("the queued update did not commit after the graph was released")
	}
}

// Each writer's updates keep their order among any number of writers:
// every counter ends at the count its writer queued.
func TestUpdateLaterFromManyWriters(t *testing.T) {
	g, in := newStatic[Num]()
	reg := in.Register(func(krt.Batch[Num]) {})
	defer reg.Unregister()
	defer runGraph(t, g)()
	const writers, each = 4, 300
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprint("w", w)
			for range each {
				g.UpdateLater(func(tx *krt.Txn) {
					wr := in.In(tx)
					cur, _ := wr.Get(key)
					wr.Set(Num{key, cur.N + 1})
				})
			}
		}()
	}
	wg.Wait()
	v, err := g.Flush(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for w := range writers {
		if got, _ := in.Get(fmt.Sprint("w", w)); got.N != each {
			t.Errorf("writer %d's counter = %d, want %d", w, got.N, each)
		}
	}
	if err := reg.WaitVersion(context.Background(), v); err != nil {
		t.Fatal(err)
	}
}

func TestSetLaterAndDeleteLater(t *testing.T) {
	var logs bytes.Buffer
	g := krt.NewGraph(krt.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	in := krt.NewStatic[Num](g)
	in.SetLater(Num{"a", 1}, Num{"b", 2})
	in.DeleteLater("a")
	sub := g.NewSubGraph("tenant")
	gone := krt.NewStatic[Num](sub)
	sub.Stop()
	gone.SetLater(Num{"late", 1}) // queued after its sub-graph stopped: dropped
	if _, err := g.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := in.Get("a"); ok {
		t.Error("a is still there after DeleteLater")
	}
	if got, _ := in.Get("b"); got.N != 2 {
		t.Errorf("b = %+v after SetLater, want N 2", got)
	}
	if gone.Len() != 0 || logs.Len() != 0 {
		t.Errorf("a write queued to a stopped sub-graph: %d items, log %q", gone.Len(), logs.String())
	}
}
