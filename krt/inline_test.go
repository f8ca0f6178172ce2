package krt_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/krt/krttest"
)

// inlineRecorder is an Inline handler that checks it is never entered
// twice at once and records the versions it was given.
type inlineRecorder struct {
	t        *testing.T
	inside   atomic.Int32
	mu       sync.Mutex
	versions []uint64
	events   int
}

func (r *inlineRecorder) handle(b krt.Batch[Num]) {
	if r.inside.Add(1) != 1 {
		r.t.Errorf("handler entered while it was running (version %d)", b.Version)
	}
	defer r.inside.Add(-1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.versions); n > 0 && b.Version <= r.versions[n-1] {
		r.t.Errorf("batch %d after batch %d", b.Version, r.versions[n-1])
	}
	r.versions = append(r.versions, b.Version)
	r.events += len(b.Events)
}

func (r *inlineRecorder) last() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.versions) == 0 {
		return 0
	}
	return r.versions[len(r.versions)-1]
}

// waitRunning returns once g's Run delivers to reg, by a write to in.
func waitRunning(t *testing.T, reg *krt.Registration, in krt.Static[Num]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), krttest.Timeout)
	defer cancel()
	if err := reg.WaitVersion(ctx, in.Set(Num{"warm-up", 0})); err != nil {
		t.Fatal(err)
	}
}

// TestInlineDeliversBeforeSetReturns: once Run runs, a Set returns after
// the Inline handler has had its batch; before Run, batches wait for it.
func TestInlineDeliversBeforeSetReturns(t *testing.T) {
	g, in := newStatic[Num]()
	r := &inlineRecorder{t: t}
	reg := in.Register(r.handle, krt.Inline())
	defer reg.Unregister()
	before := in.Set(Num{"before-run", 1})
	if r.last() != 0 {
		t.Fatalf("handler got version %d before Run", r.last())
	}
	defer runGraph(t, g)()
	waitRunning(t, reg, in)
	if r.versions[0] != before {
		t.Fatalf("first batch %d, want %d, the one committed before Run", r.versions[0], before)
	}
	for i := range 100 {
		if v := in.Set(Num{"a", i}); r.last() != v {
			t.Fatalf("Set returned %d with the handler at %d", v, r.last())
		}
	}
}

// TestInlineOrderUnderConcurrentWriters: writers on several goroutines
// give one Inline handler every batch, in version order, one at a time.
func TestInlineOrderUnderConcurrentWriters(t *testing.T) {
	g, in := newStatic[Num]()
	r := &inlineRecorder{t: t}
	reg := in.Register(r.handle, krt.Inline(), krt.WithReplay())
	defer reg.Unregister()
	defer runGraph(t, g)()
	waitRunning(t, reg, in)
	var wg sync.WaitGroup
	var last atomic.Uint64
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				v := in.Set(Num{string(rune('a' + w)), i})
				for old := last.Load(); v > old && !last.CompareAndSwap(old, v); old = last.Load() {
				}
			}
		}()
	}
	wg.Wait()
	if err := reg.WaitVersion(context.Background(), last.Load()); err != nil {
		t.Fatal(err)
	}
	if r.mu.Lock(); r.events != 801 {
		t.Errorf("handler saw %d events, want 801 (the warm-up and 4 × 200 writes)", r.events)
	}
	r.mu.Unlock()
}

// TestInlineHandlerWritesAndUnregisters: a handler's own write reaches it
// after it returns, not inside itself, and it may unregister itself.
func TestInlineHandlerWritesAndUnregisters(t *testing.T) {
	g, in := newStatic[Num]()
	r := &inlineRecorder{t: t}
	var reg *krt.Registration
	reg = in.Register(func(b krt.Batch[Num]) {
		r.handle(b)
		switch b.Events[0].Key {
		case "ping":
			in.Set(Num{"pong", 1})
		case "pong":
			reg.Unregister()
		}
	}, krt.Inline())
	defer runGraph(t, g)()
	waitRunning(t, reg, in)
	v := in.Set(Num{"ping", 1})
	if got := len(r.versions); got != 3 || r.versions[1] != v || r.versions[2] != v+1 {
		t.Fatalf("versions %v, want the warm-up, %d (ping) and %d (pong)", r.versions, v, v+1)
	}
	in.Set(Num{"after", 1})
	if got := len(r.versions); got != 3 {
		t.Fatalf("handler got %d batches after unregistering itself", got-3)
	}
}

// TestInlineSlowHandlerMovesToItsGoroutine: past the budget, a handler is
// delivered on its own goroutine, so a later block holds no writer.
func TestInlineSlowHandlerMovesToItsGoroutine(t *testing.T) {
	var logs bytes.Buffer
	g := krt.NewGraph(krt.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	in := krt.NewStatic[Num](g, krt.WithName("slow-input"))
	release := make(chan struct{})
	var calls atomic.Int32
	reg := in.Register(func(b krt.Batch[Num]) {
		switch calls.Add(1) {
		case 2:
			time.Sleep(5 * time.Millisecond)
		case 3:
			<-release
		}
	}, krt.Inline())
	defer reg.Unregister()
	defer runGraph(t, g)()
	waitRunning(t, reg, in)
	in.Set(Num{"slow", 1})
	if !strings.Contains(logs.String(), "inline handler took too long") || !strings.Contains(logs.String(), "slow-input") {
		t.Fatalf("no warning naming the collection after a slow inline delivery; log:\n%s", logs.String())
	}
	set := make(chan uint64, 1)
	go func() { set <- in.Set(Num{"blocks", 1}) }()
	select {
	case v := <-set:
		close(release)
		if err := reg.WaitVersion(context.Background(), v); err != nil {
			t.Fatal(err)
		}
	case <-time.After(krttest.Timeout):
		close(release)
		t.Fatal("Set waited for a blocked handler that was moved to its own goroutine")
	}
}
