package krt

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Parallel evaluation: when a collection has enough dirty inputs in one
// transaction, its transformations run on several goroutines, the
// writer's among them, each computing a chunk of inputs at a time. The
// computed chunks' outputs are applied one by one, in chunk order, and
// each applied chunk's reads are then filed in the reverse indexes of
// what they read, also in chunk order. Both are done by whichever
// goroutine is free: a goroutine that has computed a chunk applies the
// chunks next in order that are computed, unless another is applying,
// and files the next applied chunk's reads before it computes another,
// unless another is filing. So the goroutine that computed a chunk most
// often applies and files it too, while its results are in its core's
// cache: handing every chunk to the writer to apply made applying cost
// twice as much on two cores as on one (the results were read from the
// other core's cache). No goroutine is kept for applying or filing
// alone: on two cores a third would wait for one of the two to block
// before it runs, and leave its backlog to the end.
// Computing changes nothing but counters (see derived.compute), and
// applying and filing are where outputs, reads and events are recorded,
// each in the order a serial run records them and one goroutine at a
// time, so a parallel run gives the same outputs, reverse indexes and
// events as a serial one.
//
// Applying outputs and filing reads write disjoint state (see
// derived.applyOutputs and derived.applyReads): the first the
// collection's items, indexes, errors and inputs, the second its inputs'
// reads and the reverse indexes of its upstreams, which nothing reads
// until the collection's processing ends and propagation triggers them.
// Splitting them takes half of what the writer does per input off it
// when a build files every input's reads for the first time.
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
// into chunks, the chunks' results, which chunks are computed, applied
// and filed.
type parallelRun[O any] struct {
	tx     *Txn
	states []*inputState // the dirty inputs, in the order applied
	// results holds each computed chunk's results until it is applied,
	// in a buffer of the collection's chunk pool: only the chunks
	// computed ahead of applying hold one, not every input at once.
	results [][]result[O]
	chunk   int
	chunks  int
	claimed atomic.Int64 // chunks handed out
	done    []atomic.Bool

	// applyMu is held by the goroutine applying chunks; applied counts
	// the chunks applied (written under applyMu, read by any goroutine).
	applyMu sync.Mutex
	applied atomic.Int64
	// reads holds each applied chunk's reads until they are filed (nil:
	// nothing to file), and filed, guarded by fileMu, counts the chunks
	// filed.
	reads  [][]runReads
	fileMu sync.Mutex
	filed  int
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

// nextReady reports whether the next chunk to apply is computed.
func (r *parallelRun[O]) nextReady() bool {
	next := int(r.applied.Load())
	return next < r.chunks && r.done[next].Load()
}

// recomputeParallel computes, applies and files the dirty inputs on
// workers goroutines, the writer's among them. The goroutines have all
// returned, and every chunk is applied and its reads filed, when it does.
func (d *derived[I, O]) recomputeParallel(tx *Txn, dirty []*inputState, workers int) {
	g := d.g
	g.parallelRuns.Add(1)
	r := &parallelRun[O]{tx: tx, chunk: g.parallelChunk, states: dirty}
	r.chunks = (len(dirty) + r.chunk - 1) / r.chunk
	r.results = make([][]result[O], r.chunks)
	r.reads = make([][]runReads, r.chunks)
	r.done = make([]atomic.Bool, r.chunks)
	g.applying.Store(int64(d.id) + 1)
	defer g.applying.Store(0)
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func(slot *computing) {
			defer wg.Done()
			d.work(r, slot)
		}(&g.computing[w])
	}
	d.work(r, &g.computing[0])
	wg.Wait()
	// Every chunk is computed: apply and file what the others left.
	d.tryApply(r)
	r.fileMu.Lock()
	defer r.fileMu.Unlock()
	for d.fileNext(r) {
	}
}

// work is a goroutine's share of r: it files the next applied chunk's
// reads when no one else does, else computes the next chunk and applies
// what is ready of it and after it, until no chunk is left to compute
// nor any applied one to file at the moment.
func (d *derived[I, O]) work(r *parallelRun[O], slot *computing) {
	for {
		if d.tryFile(r) {
			continue
		}
		c, ok := r.claim()
		if !ok {
			return
		}
		d.computeChunk(r, c, slot)
		d.tryApply(r)
	}
}

// tryApply applies the computed chunks next in order, unless another
// goroutine is applying. A chunk computed while the other held applyMu
// is seen by it, or by this goroutine's check after it unlocks: the
// chunk's done flag is set before the failed TryLock, so an unlock that
// precedes the check also follows the flag.
func (d *derived[I, O]) tryApply(r *parallelRun[O]) {
	for r.nextReady() && r.applyMu.TryLock() {
		for r.nextReady() {
			d.applyChunk(r, int(r.applied.Load()))
		}
		r.applyMu.Unlock()
	}
}

func (d *derived[I, O]) computeChunk(r *parallelRun[O], c int, slot *computing) {
	start, end := r.bounds(c)
	buf := d.chunkBuffer(end - start)
	for i := range buf {
		buf[i] = d.compute(r.states[start+i], slot, len(buf)-1-i)
	}
	slot.spare = nil // the chunk's reads hold it until they are filed
	r.results[c] = buf
	r.done[c].Store(true) // publishes results[c]
}

// applyChunk applies the outputs of chunk c's results, holding applyMu so
// that a transformation fetching this collection meanwhile waits, and
// keeps their reads for filing. The results' buffer goes back to the
// pool at once, so that a build, whose reads are filed behind applying,
// does not make a buffer per chunk. The caller holds r.applyMu.
func (d *derived[I, O]) applyChunk(r *parallelRun[O], c int) {
	buf := r.results[c]
	r.results[c] = nil
	d.g.applyMu.Lock()
	for i := range buf {
		d.applyOutputs(r.tx, &buf[i])
	}
	d.g.applyMu.Unlock()
	if readsChange(buf) {
		reads := readsBuffer(len(buf))
		for i := range buf {
			reads[i] = readsOf(&buf[i])
		}
		r.reads[c] = reads
	}
	d.releaseChunk(buf)
	r.applied.Store(int64(c) + 1) // publishes reads[c]
}

// tryFile files the reads of the next applied chunk unless another
// goroutine is filing; it reports whether it filed one. Chunks are filed
// one at a time, in order, so that the reverse indexes are written as a
// serial run writes them; filing writes only the inputs' reads and the
// reverse indexes of their upstreams, which applying outputs never
// touches and nothing reads until the collection's processing ends.
func (d *derived[I, O]) tryFile(r *parallelRun[O]) bool {
	if !r.fileMu.TryLock() {
		return false
	}
	defer r.fileMu.Unlock()
	return d.fileNext(r)
}

// fileNext files the next applied chunk's reads, if there is one; the
// caller holds r.fileMu.
func (d *derived[I, O]) fileNext(r *parallelRun[O]) bool {
	c := r.filed
	if int64(c) >= r.applied.Load() {
		return false
	}
	r.filed++
	if reads := r.reads[c]; reads != nil {
		r.reads[c] = nil
		for _, rd := range reads {
			d.fileReads(rd)
		}
		releaseReads(reads)
	}
	return true
}

// readsPool holds the buffers applied chunks' reads wait in.
var readsPool sync.Pool // *[]runReads

func readsBuffer(n int) []runReads {
	if p, ok := readsPool.Get().(*[]runReads); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]runReads, n, max(n, defaultParallelChunk))
}

func releaseReads(reads []runReads) {
	clear(reads) // drop the entries and reads before the buffer is reused
	readsPool.Put(&reads)
}

// readsChange reports whether applyReads would change anything for the
// results in buf: an input gone, or a run that read other than its
// input's last run (a failed run's reads are added to the last run's).
func readsChange[O any](buf []result[O]) bool {
	for i := range buf {
		if c := &buf[i]; c.gone || !c.sameReads {
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
