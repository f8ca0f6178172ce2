package krt_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshd/meshd/krt"
)

func TestWaitVersionWaitsForTheHandler(t *testing.T) {
	g, in := newStatic[Num]()
	other := krt.NewStatic[Num](g)
	release := make(chan struct{})
	var got atomic.Uint64
	reg := in.Register(func(b krt.Batch[Num]) {
		<-release
		got.Store(b.Version)
	})
	defer reg.Unregister()
	defer runGraph(t, g)()

	v := in.Set(Num{"a", 1})
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := reg.WaitVersion(short, v); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitVersion while the handler blocks = %v", err)
	}
	close(release)
	if err := reg.WaitVersion(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	if got.Load() != v {
		t.Fatalf("handler at version %d after WaitVersion(%d)", got.Load(), v)
	}
	// A version that gave the handler no batch needs no waiting.
	if err := reg.WaitVersion(context.Background(), other.Set(Num{"b", 1})); err != nil {
		t.Fatal(err)
	}
}

func TestWaitVersionOfALaterCommit(t *testing.T) {
	g, in := newStatic[Num]()
	var got atomic.Uint64
	reg := in.Register(func(b krt.Batch[Num]) { got.Store(b.Version) })
	defer reg.Unregister()
	defer runGraph(t, g)()
	next := g.Version() + 1
	waited := make(chan error, 1)
	go func() { waited <- reg.WaitVersion(context.Background(), next) }()
	v := in.Set(Num{"a", 1})
	if err := <-waited; err != nil || v != next || got.Load() != v {
		t.Fatalf("err=%v version=%d want %d handler at %d", err, v, next, got.Load())
	}
}

func TestWaitVersionAfterUnregister(t *testing.T) {
	_, in := newStatic[Num]()
	reg := in.Register(func(krt.Batch[Num]) {})
	v := in.Set(Num{"a", 1}) // queued: the graph is not running
	reg.Unregister()
	if err := reg.WaitVersion(context.Background(), v); !errors.Is(err, krt.ErrUnregistered) {
		t.Fatalf("WaitVersion after Unregister = %v", err)
	}
}
