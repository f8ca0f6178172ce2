package krt

import (
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"time"
)

// derived is a collection computed from a primary input collection (or,
// for a singleton, from nothing but its fetches) by a transformation.
type derived[I, O any] struct {
	store[O]
	parent *store[I]  // nil for a singleton
	owner  inputOwner // what each input's entry points to: d
	one    func(HandlerContext, I) *O
	many   func(HandlerContext, I) []O

	// inputs holds one entry per input key: all the collection keeps
	// about that input, so that marking, computing and applying it look
	// the key up once (in markDirty) or not at all (a read's record
	// points at its entry).
	inputs    inputTable
	dirty     []*inputState           // marked since the last process, each once
	bigDirty  bool                    // the last process had more than largeChanges dirty inputs
	owners    map[string]string       // output key -> input that produced it
	outs      map[string][]string     // input -> its outputs' keys, if not one keyed like it
	contested map[string]map[string]O // output key -> every claimant, while >1
	failing   map[string]error        // inputs whose last computation failed
	upSynced  []upstreamRefs          // upstreams read by any input, a few
	tally     recomputeTally          // the running process call's recomputations
	chunks    sync.Pool               // *[]result[O]: parallel runs' chunk buffers
}

// inputState is what a derived collection keeps about one input: its key,
// what its last successful computation produced and read, and whether it
// waits in the dirty list. An entry made by markDirty for a key that turns
// out to be gone is dropped by the computation that finds it gone.
type inputState struct {
	key   string
	reads readList
	dirty bool
	// outSelf says the one output is keyed like the input, the common
	// case, and outMany that the outputs' keys are in the collection's
	// outs, as few inputs have other outputs: flags in the padding after
	// dirty rather than a slice in every entry.
	outSelf, outMany bool
}

// outKeys returns the keys of st's outputs, but for a single output keyed
// like st.
func (d *derived[I, O]) outKeys(st *inputState) []string {
	if !st.outMany {
		return nil
	}
	return d.outs[st.key]
}

// setOutKeys makes keys, none when empty, the keys of st's outputs.
func (d *derived[I, O]) setOutKeys(st *inputState, keys []string) {
	switch {
	case len(keys) > 0:
		if d.outs == nil {
			d.outs = map[string][]string{}
		}
		d.outs[st.key] = keys
	case st.outMany:
		delete(d.outs, st.key)
	}
	st.outMany = len(keys) > 0
}

// upstreamRefs counts the recorded reads of one upstream by a derived
// collection's inputs. A collection reads a few upstreams, so a slice
// scanned for one beats a map keyed by an interface, which hashes it.
type upstreamRefs struct {
	up upstream
	n  int
}

// inputOwner is the collection an input belongs to, as its reads reach
// it through their filters: one pointer per filter rather than an
// interface, and none per input.
type inputOwner struct {
	d       dependent
	mu      sync.Mutex   // guards nothing
	nothing []*filterSet // see unfiltered
}

// NewCollection derives a collection from in: each input item is
// transformed into at most one output (nil means none). The transformation
// must be deterministic and must read other collections only through Fetch
// and FetchOne on ctx. Outputs are keyed like any item (see WithKey).
// The initial outputs are computed before NewCollection returns.
func NewCollection[I, O any](g Owner, in Collection[I], transform func(ctx HandlerContext, in I) *O, opts ...Option) Collection[O] {
	return newDerived(g, in.core(), "collection", transform, nil, opts)
}

// NewManyCollection derives a collection from in: each input item is
// transformed into zero or more outputs. See NewCollection.
func NewManyCollection[I, O any](g Owner, in Collection[I], transform func(ctx HandlerContext, in I) []O, opts ...Option) Collection[O] {
	return newDerived(g, in.core(), "many", nil, transform, opts)
}

func newDerived[I, O any](g Owner, parent *store[I], kind string, one func(HandlerContext, I) *O, many func(HandlerContext, I) []O, opts []Option) *derived[I, O] {
	o := buildOptions(opts)
	d := &derived[I, O]{
		parent: parent, one: one, many: many,
		owners: map[string]string{},
	}
	d.init(g, kind, o)
	d.owner.d = d
	if parent != nil && parent.items.len() > 0 {
		// The initial computation fills these with one entry per input:
		// size them once instead of rehashing log2(n) times.
		n := parent.items.len()
		d.items.reserve(n)
		d.inputs.reserve(n)
		d.dirty = make([]*inputState, 0, n)
		touchFrom(d.dirty, 0)
	}
	d.g.construct(d, func(tx *Txn) {
		d.unwatched = true
		tx.touch(d) // so that finish ends the unwatched state
		if parent != nil {
			parent.downs = append(parent.downs, d)
			for k := range parent.items.keys() {
				d.markDirty(tx, k)
			}
		} else {
			d.markDirty(tx, "")
		}
	})
	return d
}

// markDirty implements downstream: input changed in the primary
// collection, or the collection is being built.
func (d *derived[I, O]) markDirty(tx *Txn, input string) {
	if d.stopped {
		return
	}
	st := d.inputs.get(input)
	if st == nil {
		st = &inputState{key: input}
		d.inputs.add(st)
	}
	d.markInput(tx, st)
}

// markInput implements dependent: st must be recomputed in tx.
func (d *derived[I, O]) markInput(tx *Txn, st *inputState) {
	if d.stopped || st.dirty {
		return
	}
	st.dirty = true
	d.dirty = append(d.dirty, st)
	tx.schedule(d)
}

// expectDirty makes room for n more dirty inputs, when they are many, so
// that marking them does not regrow the dirty list as it grows.
func (d *derived[I, O]) expectDirty(n int) {
	if n <= 64 || d.stopped {
		return
	}
	d.dirty = growTouched(d.dirty, n)
}

func (d *derived[I, O]) dropPending() {
	for _, st := range d.dirty {
		st.dirty = false
		if !st.outMany && !st.outSelf && st.reads.len() == 0 {
			// Made by markDirty and never computed, or holding nothing:
			// markDirty makes it again when needed.
			d.inputs.remove(st)
		}
	}
	d.dirty = nil
}

func (d *derived[I, O]) process(tx *Txn) {
	dirty := d.dirty
	d.dirty = nil
	for _, st := range dirty {
		st.dirty = false // marks from now on queue it again
	}
	if d.stopped { // emptied by Stop: only tell dependents
		dirty = nil
	}
	d.changeHint = len(dirty)
	if workers := d.g.workersFor(len(dirty)); workers > 1 {
		d.recomputeParallel(tx, dirty, workers)
	} else {
		for _, st := range dirty {
			d.recompute(tx, st)
		}
	}
	d.changeHint = 0
	// Keep a small list for the next transaction, and a large one through
	// a run of large transactions, as the changes' log does (see
	// changeLog.reset): a bulk load's list is dropped.
	big := len(dirty) > largeChanges
	if (cap(dirty) <= largeChanges || big && d.bigDirty) && d.dirty == nil {
		clear(dirty)
		d.dirty = dirty[:0]
	}
	d.bigDirty = big
	d.tally.flush(&d.stats)
	d.stats.failing.Store(int32(len(d.failing)))
	d.stats.conflicts.Store(int32(len(d.contested)))
	d.propagateChanges(tx)
}

// result is what one run of the transformation gave: its outputs or its
// error, and what it read. gone means the input no longer exists. A
// single output, the common case, is held in one rather than in a slice
// made for it.
type result[O any] struct {
	st     *inputState // the input's entry, as it was before the run
	gone   bool
	hasOne bool
	one    [1]O
	oneKey [1]string // one's key
	outs   []O
	keys   []string // outs' keys
	err    error
	reads  []fetchRec // what the run read, unfiled, unless sameReads
	// sameReads says the run read what the input's last run read.
	sameReads bool
	took      time.Duration
}

// outputs returns the run's outputs and their keys.
func (c *result[O]) outputs() ([]O, []string) {
	if c.hasOne {
		return c.one[:], c.oneKey[:]
	}
	return c.outs, c.keys
}

// keyOutputs computes the keys of the run's outputs, as part of the run:
// in a parallel recomputation on the goroutine that computed them, so
// that applying them does not. An output keyed like its input shares the
// input's key string.
func (d *derived[I, O]) keyOutputs(c *result[O]) {
	keyOf := func(v O) string {
		if key := d.acc.key(v); key != c.st.key {
			return key
		}
		return c.st.key
	}
	if c.hasOne {
		c.oneKey[0] = keyOf(c.one[0])
		return
	}
	if len(c.outs) > 0 {
		c.keys = make([]string, len(c.outs))
		for i, v := range c.outs {
			c.keys[i] = keyOf(v)
		}
	}
}

// recompute runs the transformation of input k again, or withdraws k's
// outputs when k is gone, and records what the run read.
func (d *derived[I, O]) recompute(tx *Txn, st *inputState) {
	slot := &d.g.computing[0]
	slot.spare = slot.scratch[:] // apply files the reads before the next run
	c := d.compute(st, slot, 0)
	d.apply(tx, &c)
	slot.spare = nil
	clear(slot.scratch[:]) // keeps no filter, and so no collection, alive
}

// compute runs the transformation of input st, reporting the run in
// slot, whose spare room its reads may take, as may those of the ahead
// computations after it. It changes nothing but counters, so that
// several inputs of one collection can be computed in parallel (see
// recomputeParallel).
func (d *derived[I, O]) compute(st *inputState, slot *computing, ahead int) result[O] {
	var in I
	if d.parent != nil {
		v, ok := d.parent.items.get(st.key)
		if !ok {
			return result[O]{st: st, gone: true}
		}
		in = v
	}
	fc := &slot.fc // the slot's, reused: a HandlerContext is valid only during the call
	*fc = fetchCtx{owner: &d.owner, in: st, input: st.key, prev: &st.reads,
		bulk: d.changeHint >= memoMinInputs, spare: slot.spare, ahead: ahead}
	start := monoNow()
	slot.begin(&d.owner, st, start)
	c := result[O]{st: st}
	c.err = d.call(fc, in, &c)
	slot.end()
	c.took = time.Duration(monoNow() - start)
	c.reads, c.sameReads = fc.reads()
	slot.spare = fc.spare
	*fc = fetchCtx{} // keeps nothing of the input alive
	return c
}

// apply records what compute gave for one input: its outputs, or its
// error with the last good outputs kept, and its reads.
func (d *derived[I, O]) apply(tx *Txn, c *result[O]) {
	d.applyOutputs(tx, c)
	d.applyReads(c)
}

// applyOutputs is apply but for the reads, which applyReads records: a
// parallel recomputation files the reads of one chunk on a goroutine of
// their own while the writer applies the next chunk's outputs (see
// parallel.go). It writes the collection's items, errors and inputs,
// never an input's reads or a reverse index.
func (d *derived[I, O]) applyOutputs(tx *Txn, c *result[O]) {
	st := c.st
	k := st.key
	if c.gone {
		d.forget(tx, st)
		return
	}
	d.tally.observe(c.took)
	if c.err != nil {
		stack := ""
		if pe, ok := c.err.(*panicError); ok {
			stack = pe.stack
		}
		d.recordError(k, c.err, stack)
		if d.failing == nil {
			d.failing = map[string]error{}
		}
		d.failing[k] = c.err
		return
	}
	delete(d.failing, k)
	outs, keys := c.outputs()
	d.replaceOutputs(tx, st, outs, keys)
}

// applyReads records the reads of c's run as its input's, in the reverse
// indexes of what it read. A failed run keeps the last good outputs, so
// its input watches what both computations read: a change to either
// retries it. It writes the input's reads, the reverse indexes and the
// collection's count of reads per upstream, and nothing applyOutputs
// does.
func (d *derived[I, O]) applyReads(c *result[O]) { d.fileReads(readsOf(c)) }

// runReads is what applyReads needs of a run's result: a parallel run
// keeps these until they are filed rather than the whole results, so
// that a chunk's buffer is reused as soon as its outputs are applied.
type runReads struct {
	st                      *inputState
	reads                   []fetchRec
	gone, failed, sameReads bool
}

func readsOf[O any](c *result[O]) runReads {
	return runReads{st: c.st, reads: c.reads, gone: c.gone, failed: c.err != nil, sameReads: c.sameReads}
}

func (d *derived[I, O]) fileReads(r runReads) {
	switch {
	case r.gone:
		d.setReads(r.st, nil)
	case r.failed && r.sameReads:
	case r.failed:
		d.setReads(r.st, unionReads(&r.st.reads, r.reads))
	case !r.sameReads:
		d.setReads(r.st, r.reads)
	}
}

// forget withdraws the outputs of input st, which is gone; applyReads
// withdraws its reads.
func (d *derived[I, O]) forget(tx *Txn, st *inputState) {
	if st.outSelf {
		d.release(tx, st.key, st.key)
	}
	for _, out := range d.outKeys(st) {
		d.release(tx, out, st.key)
	}
	d.setOutKeys(st, nil)
	st.outSelf = false
	d.inputs.remove(st)
	delete(d.failing, st.key)
}

// replaceOutputs claims outKeys, the keys of outs, for input st, releases
// those of its last outputs that outs lacks, and records the new keys in
// st.
func (d *derived[I, O]) replaceOutputs(tx *Txn, st *inputState, outs []O, outKeys []string) {
	k, prev := st.key, d.outKeys(st)
	if len(outs) == 1 && outKeys[0] == k {
		d.claim(tx, k, k, outs[0]) // the common one-to-one case: a flag, no allocation
		for _, old := range prev {
			if old != k {
				d.release(tx, old, k)
			}
		}
		d.setOutKeys(st, nil)
		st.outSelf = true
		return
	}
	var self [1]string
	if st.outSelf {
		self[0] = k
		prev = self[:]
	}
	keys := make([]string, 0, len(outs))
	for i, v := range outs {
		key := outKeys[i]
		if slices.Contains(keys, key) {
			d.recordError(k, fmt.Errorf("input %q produced two outputs with key %q; keeping the first: %w", k, key, ErrKeyConflict), "")
			continue
		}
		keys = append(keys, key)
		d.claim(tx, key, k, v)
	}
	for _, old := range prev {
		if !slices.Contains(keys, old) {
			d.release(tx, old, k)
		}
	}
	d.setOutKeys(st, keys)
	st.outSelf = false
}

// call runs the transformation, putting its outputs and their keys in c,
// and turns a panic (of the transformation or of the key function) or a
// Fail into an error, with no outputs.
func (d *derived[I, O]) call(fc *fetchCtx, in I, c *result[O]) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{value: r, stack: string(debug.Stack())}
		}
		if err != nil {
			c.hasOne, c.outs, c.keys = false, nil, nil
		}
	}()
	if d.one != nil {
		if o := d.one(fc, in); o != nil {
			c.one[0], c.hasOne = *o, true
		}
	} else {
		c.outs = d.many(fc, in)
	}
	if fc.failed == nil {
		d.keyOutputs(c)
	}
	return fc.failed
}

// claim records that input produced v under key. When another input
// already holds key, the smaller input key wins and the conflict is
// recorded.
func (d *derived[I, O]) claim(tx *Txn, key, input string, v O) {
	if key == input && len(d.owners) == 0 && len(d.contested) == 0 {
		// The common case, an output keyed like its input with no other
		// claimant: no other input can hold key.
		d.put(tx, key, v)
		return
	}
	owner, held := d.ownerOf(key)
	if !held || owner == input {
		if c := d.contested[key]; c != nil {
			c[input] = v
		}
		d.setOwner(key, input)
		d.put(tx, key, v)
		return
	}
	if d.contested == nil {
		d.contested = map[string]map[string]O{}
	}
	c := d.contested[key]
	if c == nil {
		cur, _ := d.items.get(key)
		c = map[string]O{owner: cur}
		d.contested[key] = c
	}
	c[input] = v
	d.recordError(input, fmt.Errorf("output %q is also produced by input %q; %q wins: %w",
		key, owner, min(owner, input), ErrKeyConflict), "")
	if input < owner {
		d.setOwner(key, input)
		d.put(tx, key, v)
	}
}

// release withdraws input's claim on key, handing key to the next
// claimant if there is one.
func (d *derived[I, O]) release(tx *Txn, key, input string) {
	if c := d.contested[key]; c != nil {
		delete(c, input)
		if o, _ := d.ownerOf(key); o == input {
			next := ""
			for in := range c {
				if next == "" || in < next {
					next = in
				}
			}
			d.setOwner(key, next)
			d.put(tx, key, c[next])
		}
		if len(c) == 1 {
			delete(d.contested, key)
		}
		return
	}
	if o, _ := d.ownerOf(key); o == input {
		delete(d.owners, key)
		d.remove(tx, key)
	}
}

// ownerOf returns the input that produced output key. An output keyed like
// its input, the common case, has no entry in owners: present in items and
// absent from owners means produced by the input of the same key.
func (d *derived[I, O]) ownerOf(key string) (string, bool) {
	if o, ok := d.owners[key]; ok {
		return o, true
	}
	if d.items.has(key) {
		return key, true
	}
	return "", false
}

func (d *derived[I, O]) setOwner(key, input string) {
	if key == input {
		delete(d.owners, key)
		return
	}
	d.owners[key] = input
}

// setReads replaces the reads recorded for st with recs, unfiled,
// unfiling the old ones from the reverse indexes and filing the new.
func (d *derived[I, O]) setReads(st *inputState, recs []fetchRec) {
	st.reads.each(func(r *fetchRec) {
		r.up().removeDep(r)
		d.refUpstream(r.up(), -1)
	})
	st.reads.replace(st, recs)
	st.reads.each(func(r *fetchRec) {
		r.up().addDep(r)
		d.refUpstream(r.up(), 1)
	})
}

// refUpstream adds delta to the count of reads of u, forgetting u when
// none is left.
func (d *derived[I, O]) refUpstream(u upstream, delta int) {
	for i := range d.upSynced {
		if r := &d.upSynced[i]; r.up == u {
			if r.n += delta; r.n <= 0 {
				d.upSynced = slices.Delete(d.upSynced, i, i+1)
			}
			return
		}
	}
	if delta > 0 {
		d.upSynced = append(d.upSynced, upstreamRefs{up: u, n: delta})
	}
}

// unionReads returns copies of the reads held by l followed by the reads
// of recs that l lacks.
func unionReads(l *readList, recs []fetchRec) []fetchRec {
	out := l.appendTo(nil, l.len())
	held := len(out)
	for _, r := range recs {
		if !slices.ContainsFunc(out[:held], func(x fetchRec) bool { return x.filter.equal(r.filter) }) {
			out = append(out, r)
		}
	}
	return out
}

func (d *derived[I, O]) checkSynced() bool {
	if d.synced {
		return true
	}
	if d.parent != nil && !d.parent.synced {
		return false
	}
	for _, r := range d.upSynced {
		if !r.up.isSynced() {
			return false
		}
	}
	d.markSyncedLocked()
	return true
}
