package krt

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Parallel evaluation: when a collection has enough dirty inputs in one
// transaction, its transformations run on several goroutines, each
// computing a chunk of inputs at a time, while the writer's goroutine
// applies the computed chunks' outputs one by one, in chunk order, and
// computes chunks itself whenever the next one to apply is not ready; a
// filing goroutine then records each applied chunk's reads in the
// reverse indexes of what they read, also in chunk order (it starts with
// the first chunk whose reads changed: see filing). Computing
// changes nothing but counters (see derived.compute), and applying is
// where outputs, reads and events are recorded, each in the order a
// serial run records them, so a parallel run gives the same outputs,
// reverse indexes and events as a serial one; and since applying
// overlaps computing, the writer's share of the work (applying) no
// longer waits for the last chunk to be computed.
//
// Applying outputs and filing reads write disjoint state (see
// derived.applyOutputs and derived.applyReads): the first the
// collection's items, indexes, errors and inputs, the second its inputs'
// reads and the reverse indexes of its upstreams, which nothing reads
// until the collection's processing ends and propagation triggers them.
// Splitting them halves what the writer does per input when a build
// files every input's reads for the first time.
//
// What the two may share: a computation reads its input, its own last
// reads and the collections it fetches; applying writes the collection's
// own items, indexes and bookkeeping and the reverse indexes of what it
// fetched. The inputs' last states are looked up before any goroutine
// starts, so only a transformation that fetches its own collection reads
// what applying writes: such a fetch takes Graph.applyMu for reading, and
// applying holds it for writing while it applies a chunk.

const (
	// defaultParallelMin is the fewest dirty inputs worth a second
	// goroutine: starting one costs about a microsecond, a transformation
	// a few.
	defaultParallelMin = 64
	// defaultParallelChunk is how many inputs a goroutine takes at a time.
	defaultParallelChunk = 16
)

// defaultParallelism is how many goroutines a graph may compute one
// collection with unless WithParallelism says otherwise: GOMAXPROCS when
// the graph is made. workersFor caps it at GOMAXPROCS when it runs, so
// that at GOMAXPROCS=1 every collection is computed serially, on the
// writer's goroutine, whatever the parallelism.
func defaultParallelism() int { return runtime.GOMAXPROCS(0) }

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

// parallelRun is one collection's parallel recomputation: its inputs cut
// into chunks, the chunks' results, and which chunks are computed.
type parallelRun[O any] struct {
	states []*inputState // the dirty inputs, in the order applied
	// results holds each computed chunk's results until it is applied,
	// in a buffer of the collection's chunk pool: only the chunks
	// computed ahead of applying hold one, not every input at once.
	results [][]result[O]
	chunk   int
	chunks  int
	claimed atomic.Int64 // chunks handed out
	done    []atomic.Bool
	// computed receives a token per chunk a worker finishes: the writer
	// waits on it when the chunk it must apply next is not ready.
	computed chan struct{}
}

// claim hands out the next chunk to compute; ok is false when none is left.
func (r *parallelRun[O]) claim() (c int, ok bool) {
	c = int(r.claimed.Add(1)) - 1
	return c, c < r.chunks
}

func (r *parallelRun[O]) bounds(c int) (start, end int) {
	start = c * r.chunk
	return start, min(start+r.chunk, len(r.states))
}

// recomputeParallel computes the dirty inputs on workers goroutines, the
// writer's among them, and applies the results in chunk order on the
// writer's goroutine as they become ready. The goroutines have all
// returned when it does.
func (d *derived[I, O]) recomputeParallel(tx *Txn, dirty []*inputState, workers int) {
	g := d.g
	g.parallelRuns.Add(1)
	r := &parallelRun[O]{chunk: g.parallelChunk, states: dirty}
	r.chunks = (len(dirty) + r.chunk - 1) / r.chunk
	r.results = make([][]result[O], r.chunks)
	r.done = make([]atomic.Bool, r.chunks)
	r.computed = make(chan struct{}, r.chunks)
	g.applying.Store(int64(d.id) + 1)
	defer g.applying.Store(0)
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func(slot *computing) {
			defer wg.Done()
			for c, ok := r.claim(); ok; c, ok = r.claim() {
				d.computeChunk(r, c, slot)
				r.computed <- struct{}{}
			}
		}(&g.computing[w])
	}
	defer wg.Wait()
	f := &filing[I, O]{d: d, chunks: r.chunks}
	defer f.stop() // before wg.Wait: the filing goroutine ends
	d.applyAsComputed(tx, r, f)
}

// applyAsComputed applies the chunks of r in order, computing a chunk on
// the writer's goroutine whenever the next one is not ready yet, and
// hands each applied chunk's results to f, to file their reads.
func (d *derived[I, O]) applyAsComputed(tx *Txn, r *parallelRun[O], f *filing[I, O]) {
	for next := 0; next < r.chunks; {
		if r.done[next].Load() {
			f.file(d.applyChunk(tx, r, next))
			next++
			continue
		}
		if c, ok := r.claim(); ok {
			d.computeChunk(r, c, &d.g.computing[0])
			continue
		}
		<-r.computed // a worker is computing next: wait for a chunk
	}
}

func (d *derived[I, O]) computeChunk(r *parallelRun[O], c int, slot *computing) {
	start, end := r.bounds(c)
	buf := d.chunkBuffer(end - start)
	for i := range buf {
		buf[i] = d.compute(r.states[start+i], slot)
	}
	r.results[c] = buf
	r.done[c].Store(true) // publishes results[c] to the writer
}

// applyChunk applies the outputs of chunk c's results, holding applyMu so
// that a transformation fetching this collection meanwhile waits, and
// returns the results, whose reads are still to be filed.
func (d *derived[I, O]) applyChunk(tx *Txn, r *parallelRun[O], c int) []result[O] {
	buf := r.results[c]
	r.results[c] = nil
	d.g.applyMu.Lock()
	defer d.g.applyMu.Unlock()
	for i := range buf {
		d.applyOutputs(tx, &buf[i])
	}
	return buf
}

// filing files the reads of a parallel run's applied chunks, in chunk
// order, on a goroutine of its own, started by the first chunk whose
// reads change: a recomputation whose inputs read what they read before
// (a mesh-config change) starts none.
type filing[I, O any] struct {
	d      *derived[I, O]
	chunks int
	queue  chan []result[O] // nil until the goroutine starts
	wg     sync.WaitGroup
}

// file takes an applied chunk's results. A chunk whose every run read
// what its input's last run read changes no reverse index, as
// applyReads would find: its buffer goes back to the pool at once. Its
// inputs' reads are not written meanwhile, as the goroutine files only
// other chunks' inputs.
func (f *filing[I, O]) file(buf []result[O]) {
	if !readsChange(buf) {
		f.d.releaseChunk(buf)
		return
	}
	if f.queue == nil {
		f.queue = make(chan []result[O], f.chunks)
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			for buf := range f.queue {
				for i := range buf {
					f.d.applyReads(&buf[i])
				}
				f.d.releaseChunk(buf)
			}
		}()
	}
	f.queue <- buf
}

// stop waits until every chunk handed to file is filed.
func (f *filing[I, O]) stop() {
	if f.queue != nil {
		close(f.queue)
		f.wg.Wait()
	}
}

// readsChange reports whether applyReads would change anything for the
// results in buf: an input gone or failed, or a run that read other than
// its input's last run.
func readsChange[O any](buf []result[O]) bool {
	for i := range buf {
		if c := &buf[i]; c.gone || c.err != nil || !sameDeps(c.st.deps, c.deps) {
			return true
		}
	}
	return false
}

// releaseChunk returns a chunk's buffer to the pool.
func (d *derived[I, O]) releaseChunk(buf []result[O]) {
	clear(buf) // drop the outputs and reads before the buffer is reused
	d.chunks.Put(&buf)
}

// chunkBuffer returns a buffer for n results from the collection's pool.
// A run holds as many as it has chunks computed and not yet applied, and
// the pool lets the next run reuse them: results are not allocated per
// input, nor kept between transactions once the pool is collected.
func (d *derived[I, O]) chunkBuffer(n int) []result[O] {
	if p, ok := d.chunks.Get().(*[]result[O]); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]result[O], n, max(n, d.g.parallelChunk))
}

// guardSelfFetch is called by a fetch from s; when the collection
// being recomputed in parallel fetches itself, the fetch must not read
// while a chunk is applied, and it returns the unlock to defer.
func (g *Graph) guardSelfFetch(id int) (unlock func()) {
	if g.applying.Load() != int64(id)+1 {
		return nil
	}
	g.applyMu.RLock()
	return g.applyMu.RUnlock
}
