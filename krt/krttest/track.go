package krttest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/meshd/meshd/krt"
)

// Timeout bounds how long Run's cleanup and Tracker.Expect wait.
const Timeout = 10 * time.Second

// Run runs g's handlers until the test ends; the cleanup fails t if Run
// does not return in Timeout.
func Run(t testing.TB, g *krt.Graph) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(Timeout):
			t.Errorf("krttest.Run: Graph.Run did not return within %v", Timeout)
		}
	})
}

// Tracker records the events a handler on one collection receives.
type Tracker[T any] struct {
	t   testing.TB
	g   *krt.Graph
	c   krt.Collection[T]
	reg *krt.Registration

	mu     sync.Mutex
	events []string
}

// Track registers a handler on c, a collection of g, that records each
// event as "add KEY", "update KEY" or "delete KEY", and unregisters it
// when the test ends. opts are passed to Register (krt.WithReplay records
// the current items as adds first). g must be running (see Run) for
// events to arrive.
func Track[T any](t testing.TB, g *krt.Graph, c krt.Collection[T], opts ...krt.RegisterOption) *Tracker[T] {
	tr := &Tracker[T]{t: t, g: g, c: c}
	tr.reg = c.Register(func(b krt.Batch[T]) {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		for _, e := range b.Events {
			tr.events = append(tr.events, e.Type.String()+" "+e.Key)
		}
	}, opts...)
	t.Cleanup(tr.reg.Unregister)
	return tr
}

// Expect waits until the handler has received every batch up to the
// version g has committed, then fails the test unless the events recorded
// since the last Expect are want, in order (each batch's events are
// ordered by key). Expect() with no arguments asserts that nothing
// happened.
func (tr *Tracker[T]) Expect(want ...string) {
	tr.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	if err := tr.reg.WaitVersion(ctx, tr.g.Version()); err != nil {
		tr.t.Fatalf("krttest: %s: handler did not reach version %d: %v (is the graph running? see krttest.Run)",
			tr.c.Name(), tr.g.Version(), err)
	}
	tr.mu.Lock()
	got := tr.events
	tr.events = nil
	tr.mu.Unlock()
	if !slices.Equal(got, want) && (len(got) > 0 || len(want) > 0) {
		tr.t.Fatalf("%s events %q, want %q", tr.c.Name(), got, want)
	}
}
