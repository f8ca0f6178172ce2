package krt

import "fmt"

// HandlerContext is passed to transformations. It records what the
// transformation reads through Fetch, so that later changes to those reads
// recompute it. It is valid only during the call it was passed to.
type HandlerContext interface {
	// Fail marks this computation as failed with err: its outputs are
	// discarded, the input keeps its last good outputs, and err is recorded
	// on the collection. The input is retried when it or anything it read
	// changes.
	Fail(err error)
	// Key returns the key of the input being transformed ("" for a
	// singleton).
	Key() string

	fetchContext() *fetchCtx
}

type fetchCtx struct {
	owner  *inputOwner // in's collection, which its reads' filters name
	in     *inputState
	input  string
	prev   *readList  // what in's last computation read, to compare with
	kept   int        // the reads so far, while each is prev's at its position
	fresh  []fetchRec // nil while kept counts the reads; else all of them
	failed error
	// bulk says many inputs of the collection recompute at once, when
	// the fetches that repeat a shared read reuse its result (fetchmemo.go).
	bulk bool
	// spare is room fresh may take its array from (see room), and ahead
	// how many computations after this one will take theirs from the
	// same room: those of the rest of a parallel run's chunk.
	spare []fetchRec
	ahead int
}

// room returns an empty slice with room for n reads, carved from spare
// when it has that much: a build records every input's reads afresh, and
// a chunk's inputs then take one array between them, or a serial run's
// the slot's scratch, rather than one each. When spare is short and
// computations follow, it is remade for them all, as many reads each.
func (c *fetchCtx) room(n int) []fetchRec {
	if cap(c.spare) < n {
		if c.ahead == 0 {
			return make([]fetchRec, 0, n)
		}
		c.spare = make([]fetchRec, n*(c.ahead+1))
	}
	r := c.spare[:0:n] // a read past n regrows r, not into the next one's
	c.spare = c.spare[n:]
	return r
}

func (c *fetchCtx) Fail(err error) {
	if err == nil {
		err = ErrFailed
	}
	c.failed = err
}
func (c *fetchCtx) Key() string             { return c.input }
func (c *fetchCtx) fetchContext() *fetchCtx { return c }

// Fetch returns the items of c that pass every filter, ordered by key, and
// records a dependency on them: when an item that passes (or passed) the
// filters changes, the calling transformation's input is recomputed.
// Fetch panics if ctx is nil; outside transformations use Get, List or an
// Index. A filter on a part the items lack (FilterLabels on items without
// labels, and so on) fails the computation with ErrNoAccessor and returns
// nothing.
func Fetch[T any](ctx HandlerContext, c Collection[T], filters ...Filter) []T {
	return fetch(ctx, c, filters, nil)
}

// fetch is Fetch; same, when not nil, is a PartialFetch's equality of two
// values of an item, func(a, b T) bool.
func fetch[T any](ctx HandlerContext, c Collection[T], filters []Filter, same any) []T {
	s, fs, kept, ok := beginFetch(ctx, c, filters, same)
	if !ok {
		return nil
	}
	if unlock := s.g.guardSelfFetch(s.id); unlock != nil {
		defer unlock()
	}
	if kept != nil && ctx.fetchContext().bulk {
		return s.queryMemo(kept, &fs)
	}
	return s.query(&fs)
}

// beginFetch checks and records a fetch from c with filters, and returns
// its collection and filter, and the recorded filter of the input's last
// computation's read that it repeats, if any; ok is false when it can
// find nothing.
func beginFetch[T any](ctx HandlerContext, c Collection[T], filters []Filter, same any) (s *store[T], fs filterSet, kept *filterSet, ok bool) {
	if ctx == nil {
		panic("krt: Fetch called without a HandlerContext")
	}
	fc := ctx.fetchContext()
	s = c.core()
	fs = filterSet{index: -1, src: &s.deps, down: fc.owner}
	for _, fl := range filters {
		if fl.kind == filterIndex {
			s.checkIndex(fl.index, fl.owner)
		}
		fs.add(fl)
	}
	if same != nil {
		r := filterRare{}
		if fs.rare != nil {
			r = *fs.rare
			r.one = [1]string{}
		}
		r.same = same
		fs.rare = &r
	}
	if s.stopped { // its sub-graph stopped: empty, and never changes again
		return s, fs, nil, false
	}
	if err := s.checkAccessors(&fs); err != nil {
		if fc.failed == nil {
			fc.failed = err
		}
		return s, fs, nil, false
	}
	return s, fs, fc.record(&fs), true
}

// record adds a read with fs to the computation's reads, and returns the
// recorded filter of the last computation's read it repeats, or nil. In
// the steady state a computation reads what it read last time: it counts
// those reads rather than copying them, and allocates nothing.
func (c *fetchCtx) record(fs *filterSet) *filterSet {
	if c.fresh == nil {
		if c.prev.matches(c.kept, fs) {
			c.kept++
			return c.prev.at(c.kept - 1).filter
		}
		c.fresh = c.prev.appendTo(c.room(max(c.prev.len(), c.kept+1, 2)), c.kept)
	}
	if i := len(c.fresh); c.prev.matches(i, fs) {
		c.fresh = append(c.fresh, *c.prev.at(i)) // and the filter it shares
		return c.prev.at(i).filter
	}
	c.fresh = append(c.fresh, fetchRec{in: c.in, filter: c.owner.keepFilter(fs)})
	return nil
}

// reads returns what the computation read, unfiled, and same, true when
// that is what its last computation read (and reads returns nil).
func (c *fetchCtx) reads() (recs []fetchRec, same bool) {
	switch {
	case c.fresh != nil:
		return c.fresh, false
	case c.kept == c.prev.len():
		return nil, true
	}
	return c.prev.appendTo(nil, c.kept), false // a prefix of the last reads
}

// FetchOne returns the item of c that passes every filter and records the
// dependency, as Fetch does. When several items pass, it returns the one
// with the smallest key; when none does, ok is false.
func FetchOne[T any](ctx HandlerContext, c Collection[T], filters ...Filter) (v T, ok bool) {
	s, fs, _, ok := beginFetch(ctx, c, filters, nil)
	if !ok {
		return v, false
	}
	if unlock := s.g.guardSelfFetch(s.id); unlock != nil {
		defer unlock()
	}
	return s.queryFirst(&fs)
}

// panicError is an ErrPanic carrying the panic value and stack.
type panicError struct {
	value any
	stack string
}

func (e *panicError) Error() string { return fmt.Sprintf("panic: %v", e.value) }
func (e *panicError) Unwrap() error { return ErrPanic }
