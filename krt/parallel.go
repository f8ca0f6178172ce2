package krt

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Parallel evaluation: when a collection has enough dirty inputs in one
// transaction, its transformations run on several goroutines, each
// computing a chunk of inputs at a time, while the writer's goroutine
// applies the computed chunks' outputs one by one, in chunk order. Each
// applied chunk's reads are then filed in the reverse indexes of what
// they read, also in chunk order, by whichever goroutine is free: a
// worker files before it computes, the writer when the next chunk to
// apply is not ready, before it computes one itself. No goroutine is
// kept for filing alone: on two cores a third would wait for one of the
// two to block before it runs, and leave its backlog to the end.
// Computing changes nothing but counters (see derived.compute), and
// applying and filing are where outputs, reads and events are recorded,
// each in the order a serial run records them, so a parallel run gives
// the same outputs, reverse indexes and events as a serial one; and since
// applying overlaps computing, the writer's share of the work (applying)
// no longer waits for the last chunk to be computed.
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

	// reads holds each applied chunk's reads until they are filed (nil:
	// nothing to file), applied counts the chunks applied (published by
	// the writer), and filed, guarded by fileMu, the chunks filed.
	reads   [][]runReads
	applied atomic.Int64
	fileMu  sync.Mutex
	filed   int
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
// returned, and every chunk's reads are filed, when it does.
func (d *derived[I, O]) recomputeParallel(tx *Txn, dirty []*inputState, workers int) {
	g := d.g
	g.parallelRuns.Add(1)
	r := &parallelRun[O]{chunk: g.parallelChunk, states: dirty}
	r.chunks = (len(dirty) + r.chunk - 1) / r.chunk
	r.results = make([][]result[O], r.chunks)
	r.reads = make([][]runReads, r.chunks)
	r.done = make([]atomic.Bool, r.chunks)
	r.computed = make(chan struct{}, r.chunks)
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
	d.applyAsComputed(tx, r)
	wg.Wait()
	r.fileMu.Lock()
	defer r.fileMu.Unlock()
	for d.fileNext(r) { // what was applied after the workers returned
	}
}

// work is a worker's share of r: it files the next applied chunk's reads
// when no one else does, else computes the next chunk, until no chunk is
// left to compute nor any applied one to file at the moment; the writer
// files what is applied after it returns.
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
		r.computed <- struct{}{}
	}
}

// applyAsComputed applies the chunks of r in order; whenever the next is
// not ready yet, it files an applied chunk's reads or computes a chunk
// meanwhile.
func (d *derived[I, O]) applyAsComputed(tx *Txn, r *parallelRun[O]) {
	for next := 0; next < r.chunks; {
		if r.done[next].Load() {
			d.applyChunk(tx, r, next)
			next++
			continue
		}
		if d.tryFile(r) {
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
		buf[i] = d.compute(r.states[start+i], slot, len(buf)-1-i)
	}
	slot.spare = nil // the chunk's reads hold it until they are filed
	r.results[c] = buf
	r.done[c].Store(true) // publishes results[c] to the writer
}

// applyChunk applies the outputs of chunk c's results, holding applyMu so
// that a transformation fetching this collection meanwhile waits, and
// keeps their reads for filing. The results' buffer goes back to the
// pool at once, so that a build, whose reads are filed behind applying,
// does not make a buffer per chunk.
func (d *derived[I, O]) applyChunk(tx *Txn, r *parallelRun[O], c int) {
	buf := r.results[c]
	r.results[c] = nil
	d.g.applyMu.Lock()
	for i := range buf {
		d.applyOutputs(tx, &buf[i])
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
