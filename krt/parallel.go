package krt

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Parallel evaluation: when a collection has enough dirty inputs in one
// transaction, its transformations run on several goroutines, each
// computing a chunk at a time, and the results are then applied on the
// writer's goroutine one by one, in the order a serial run would take
// them. Computing changes nothing but counters (see derived.compute), and
// applying is where outputs, reads and events are recorded, so a parallel
// run gives the same outputs and events as a serial one.

const (
	// defaultParallelMin is the fewest dirty inputs worth a second
	// goroutine: starting one costs about a microsecond, a transformation
	// a few.
	defaultParallelMin = 64
	// defaultParallelChunk is how many inputs a goroutine takes at a time.
	defaultParallelChunk = 16
)

// workersFor returns how many goroutines should compute n dirty inputs of
// one collection: 1 below the threshold, else at most the graph's
// parallelism and GOMAXPROCS.
func (g *Graph) workersFor(n int) int {
	max := len(g.computing)
	if max <= 1 || n < g.parallelMin {
		return 1
	}
	if !g.forceParallel {
		max = min(max, runtime.GOMAXPROCS(0))
	}
	return min(max, (n+g.parallelChunk-1)/g.parallelChunk)
}

// recomputeParallel computes the dirty inputs on workers goroutines, the
// writer's among them, then applies the results in the dirty list's
// order. The goroutines have all returned when it does.
func (d *derived[I, O]) recomputeParallel(tx *Txn, dirty []*inputState, workers int) {
	d.g.parallelRuns.Add(1)
	results := make([]result[O], len(dirty))
	var next atomic.Int64
	chunk := d.g.parallelChunk
	work := func(slot *computing) {
		for {
			end := int(next.Add(int64(chunk)))
			start := end - chunk
			if start >= len(dirty) {
				return
			}
			for i := start; i < min(end, len(dirty)); i++ {
				results[i] = d.compute(dirty[i], slot)
			}
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func(slot *computing) {
			defer wg.Done()
			work(slot)
		}(&d.g.computing[w])
	}
	work(&d.g.computing[0])
	wg.Wait()
	for i := range results {
		d.apply(tx, &results[i])
		results[i] = result[O]{}
	}
}
