package krt_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/meshd/meshd/krt"
)

// eventLog records, per collection, every event its handler gets.
type eventLog struct {
	mu    sync.Mutex
	lines map[string][]string
}

func record[T any](l *eventLog, name string, c krt.Collection[T]) {
	c.Register(func(b krt.Batch[T]) {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, e := range b.Events {
			l.lines[name] = append(l.lines[name], fmt.Sprintf("v%d %s %s %+v", b.Version, e.Type, e.Key, e.Latest()))
		}
	})
}

func (l *eventLog) of(name string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines[name])
}

var recordedCollections = []string{"workloads", "endpoints", "addresses", "joined", "summary"}

// TestParallelEventsMatchSerial runs the same random transactions on the
// model graph computed serially and in parallel, and checks that every
// derived collection's handler receives the same events: versions, types,
// keys and values, in the same order.
func TestParallelEventsMatchSerial(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			var logs []*eventLog
			var versions []uint64
			for _, mode := range modelModes {
				l := &eventLog{lines: map[string][]string{}}
				stop, v := runRecorded(mode.graph(), seed, l)
				defer stop()
				logs, versions = append(logs, l), append(versions, v)
			}
			if versions[0] != versions[1] {
				t.Fatalf("final versions differ: serial %d, parallel %d", versions[0], versions[1])
			}
			for _, name := range recordedCollections {
				// Handlers deliver on their own goroutines: wait for both
				// logs to agree, and fail if they never do.
				deadline := time.Now().Add(10 * time.Second)
				for !slices.Equal(logs[0].of(name), logs[1].of(name)) {
					if time.Now().After(deadline) {
						s, p := logs[0].of(name), logs[1].of(name)
						t.Fatalf("%s: events differ: serial %d, parallel %d, first difference at %d",
							name, len(s), len(p), firstDifference(s, p))
					}
					time.Sleep(2 * time.Millisecond)
				}
				if len(logs[0].of(name)) == 0 {
					t.Errorf("%s: no events recorded", name)
				}
			}
		})
	}
}

// runRecorded applies 200 random transactions to a model graph on g with
// handlers on every derived collection, delivered by g.Run until stop is
// called, and returns the final version.
func runRecorded(g *krt.Graph, seed uint64, l *eventLog) (stop func(), version uint64) {
	m := newModelGraphIn(g)
	record(l, "workloads", m.workloads)
	record(l, "endpoints", m.endpoints)
	record(l, "addresses", m.addresses)
	record(l, "joined", m.joined)
	record(l, "summary", krt.Collection[Summary](m.summary))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for range 200 {
		var ops []op
		for range 1 + r.IntN(6) {
			_, o := randomOp(r, m)
			ops = append(ops, o)
		}
		version = m.g.Update(func(tx *krt.Txn) {
			for _, o := range ops {
				o(tx)
			}
		})
	}
	return func() { cancel(); <-done }, version
}

func firstDifference(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// numbered is an item keyed by its number, as the self-fetch test needs.
type numbered struct{ N, Value int }

func (n numbered) ResourceName() string { return fmt.Sprintf("n%04d", n.N) }

// TestParallelSelfFetch runs a transformation that fetches its own
// collection while its results are applied in parallel: under -race this
// shows that the fetch does not read what applying writes, and the
// outputs match a serial run's.
func TestParallelSelfFetch(t *testing.T) {
	var want []numbered
	var wantRecomputes uint64
	for _, mode := range modelModes {
		g := mode.graph()
		nums := krt.NewStatic[numbered](g)
		var doubled krt.Collection[numbered]
		doubled = krt.NewCollection(g, nums, func(ctx krt.HandlerContext, n numbered) *numbered {
			prev := numbered{N: n.N - 1}.ResourceName()
			krt.Fetch(ctx, doubled, krt.FilterKey(prev)) // a read of its own collection
			return &numbered{N: n.N, Value: 2 * n.Value}
		}, krt.WithName("doubled"))
		for round := range 3 {
			items := make([]numbered, 200)
			for i := range items {
				items[i] = numbered{N: i, Value: i + round}
			}
			nums.Set(items...)
		}
		got := doubled.List()
		if len(got) != 200 || got[199].Value != 2*(199+2) {
			t.Fatalf("%s: %d outputs, last %+v", mode.name, len(got), got[len(got)-1])
		}
		// Each goroutine counts its computations apart; the counters
		// must add up to a serial run's.
		ci := info(t, g, "doubled")
		var bucketed uint64
		for _, n := range ci.RecomputeBuckets {
			bucketed += n
		}
		if bucketed != ci.Recomputes {
			t.Errorf("%s: %d recomputes, %d in the duration buckets", mode.name, ci.Recomputes, bucketed)
		}
		if want == nil {
			want, wantRecomputes = got, ci.Recomputes
		} else if !slices.Equal(got, want) {
			t.Fatalf("%s: outputs differ from %s", mode.name, modelModes[0].name)
		} else if ci.Recomputes != wantRecomputes {
			t.Errorf("%s: %d recomputes, %s made %d", mode.name, ci.Recomputes, modelModes[0].name, wantRecomputes)
		}
		if runs := krt.ParallelRuns(g); (mode.name == "parallel") != (runs > 0) {
			t.Errorf("%s mode computed in parallel %d times", mode.name, runs)
		}
	}
}

// TestDefaultParallelism checks the default: a graph made at GOMAXPROCS=1
// computes every collection serially, on the writer's goroutine, however
// many inputs are dirty, and one made at GOMAXPROCS=2 computes a large
// recomputation in parallel, with the same outputs.
func TestDefaultParallelism(t *testing.T) {
	var outputs [2][]numbered
	for i, procs := range []int{1, 2} {
		prev := runtime.GOMAXPROCS(procs)
		g := krt.NewGraph()
		nums := krt.NewStatic[numbered](g)
		doubled := krt.NewCollection(g, nums, func(ctx krt.HandlerContext, n numbered) *numbered {
			return &numbered{N: n.N, Value: 2 * n.Value}
		}, krt.WithName("doubled"))
		items := make([]numbered, 500) // well above the threshold of 64
		for j := range items {
			items[j] = numbered{N: j, Value: j}
		}
		nums.Set(items...)
		outputs[i] = doubled.List()
		runs := krt.ParallelRuns(g)
		runtime.GOMAXPROCS(prev)
		if want := procs > 1; (runs > 0) != want {
			t.Errorf("GOMAXPROCS=%d: %d parallel runs, want parallel %v", procs, runs, want)
		}
		if len(outputs[i]) != len(items) || outputs[i][len(items)-1].Value != 2*(len(items)-1) {
			t.Fatalf("GOMAXPROCS=%d: %d outputs, want %d doubled", procs, len(outputs[i]), len(items))
		}
	}
	if !slices.Equal(outputs[0], outputs[1]) {
		t.Error("outputs differ between GOMAXPROCS=1 and 2")
	}
}

// TestParallelFailedAndGoneReads checks the reads a parallel run files
// apart from the outputs it applies: a failed computation's input keeps
// watching what its last good run and its failed run read, and a deleted
// input's reads are withdrawn, in both modes alike.
func TestParallelFailedAndGoneReads(t *testing.T) {
	const n = 200
	for _, mode := range modelModes {
		t.Run(mode.name, func(t *testing.T) {
			g := mode.graph()
			nums, gates := newGated(g, n)
			recomputes := func() uint64 { return info(t, g, "gated").Recomputes }
			setGates := func(from, to, value int) uint64 { // every other gate in [from, to)
				var changed []numbered
				for i := from; i < to; i += 2 {
					changed = append(changed, numbered{N: i, Value: value})
				}
				before := recomputes()
				gates.Set(changed...)
				return recomputes() - before
			}
			// Close the gates of the even inputs: they fail, reading a
			// second gate instead of the third.
			if got := setGates(0, n, 1); got != n/2 {
				t.Fatalf("closing %d gates recomputed %d inputs", n/2, got)
			}
			// A change to the second gate, read only by the failed runs,
			// or to the third, read only by their last good runs, retries
			// each failed input.
			for _, from := range []int{n, 2 * n} {
				if got := setGates(from, from+n, 2); got != n/2 {
					t.Fatalf("changing gates from %d retried %d inputs, want the %d failed", from, got, n/2)
				}
			}
			if runs := krt.ParallelRuns(g); (mode.name == "parallel") != (runs > 0) {
				t.Errorf("%s mode computed in parallel %d times", mode.name, runs)
			}
			// Deleted inputs read nothing any more.
			var gone []string
			for i := range n {
				gone = append(gone, numbered{N: i}.ResourceName())
			}
			nums.Delete(gone...)
			for from := range 3 {
				if got := setGates(from*n, (from+1)*n, 3); got != 0 {
					t.Fatalf("changing the gates from %d of deleted inputs recomputed %d", from*n, got)
				}
			}
		})
	}
}

// newGated returns n numbers and 3n gates in g, and a collection "gated"
// of the numbers: number x reads gate x and, when that gate's value is 1,
// gate n+x and fails, else gate 2n+x and passes.
func newGated(g *krt.Graph, n int) (nums, gates krt.Static[numbered]) {
	nums, gates = krt.NewStatic[numbered](g), krt.NewStatic[numbered](g)
	krt.NewCollection(g, nums, func(ctx krt.HandlerContext, x numbered) *numbered {
		gate, _ := krt.FetchOne(ctx, gates, krt.FilterKey(x.ResourceName()))
		if gate.Value == 1 {
			krt.FetchOne(ctx, gates, krt.FilterKey(numbered{N: n + x.N}.ResourceName()))
			ctx.Fail(nil)
			return nil
		}
		krt.FetchOne(ctx, gates, krt.FilterKey(numbered{N: 2*n + x.N}.ResourceName()))
		return &x
	}, krt.WithName("gated"))
	items := make([]numbered, 3*n)
	for i := range items {
		items[i] = numbered{N: i}
	}
	nums.Set(items[:n]...)
	gates.Set(items...)
	return nums, gates
}

// TestParallelRunsOnItsWorkers checks that a parallel run starts no
// goroutine beyond its workers: the reads are filed by the workers and
// the writer, not by one more goroutine, which on two cores would run
// only when one of them blocked. Each transformation notes how many
// goroutines are running while the chunks are applied and filed.
func TestParallelRunsOnItsWorkers(t *testing.T) {
	const workers, n = 2, 400
	g := krt.NewGraph(krt.WithParallelism(workers))
	krt.ForceParallel(g)
	nums := krt.NewStatic[numbered](g)
	items := make([]numbered, n)
	for i := range items {
		items[i] = numbered{N: i, Value: i}
	}
	nums.Set(items...)
	var mu sync.Mutex
	most := 0
	before := runtime.NumGoroutine()
	krt.NewCollection(g, nums, func(ctx krt.HandlerContext, x numbered) *numbered {
		krt.FetchOne(ctx, nums, krt.FilterKey(numbered{N: (x.N + 1) % n}.ResourceName())) // a read to file
		mu.Lock()
		most = max(most, runtime.NumGoroutine())
		mu.Unlock()
		return &x
	})
	if krt.ParallelRuns(g) == 0 {
		t.Fatal("the build was not computed in parallel")
	}
	if extra := most - before; extra > workers-1 {
		t.Errorf("%d goroutines ran beside the writer during the build, want at most %d workers", extra, workers-1)
	}
}
