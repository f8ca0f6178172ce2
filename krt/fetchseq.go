package krt

import "iter"

// FetchSeq is Fetch as an iterator: the same dependency, and the same
// items in the same order, handed over one at a time instead of in a new
// slice. A transformation that reads each item once (to collect a field,
// count, or find one) saves the slice's allocation, which for a large
// item type is most of what a small recomputation allocates. The read,
// and with it the dependency, happens when the sequence is ranged over,
// which must be during the computation, as for the HandlerContext itself.
func FetchSeq[T any](ctx HandlerContext, c Collection[T], filters ...Filter) iter.Seq[T] {
	// Small enough to inline: ranged over at once, the closure stays on
	// the caller's stack.
	return func(yield func(T) bool) { fetchEach(ctx, c, filters, yield) }
}

// fetchEach is Fetch, yielding the items instead of collecting them.
func fetchEach[T any](ctx HandlerContext, c Collection[T], filters []Filter, yield func(T) bool) {
	s, fs, kept, ok := beginFetch(ctx, c, filters, nil)
	if !ok {
		return
	}
	if unlock := s.g.guardSelfFetch(s.id); unlock != nil {
		defer unlock()
	}
	if kept != nil && ctx.fetchContext().bulk {
		// A shared filter's memo is read in place: yield copies each
		// item, so no slice of copies is needed; an unshared one keeps
		// no memo, and is queried as a single change's read is.
		if vals, ok := s.memoized(kept, &fs); ok {
			for _, v := range vals {
				if !yield(v) {
					return
				}
			}
			return
		}
	}
	s.queryEach(&fs, yield)
}

// queryEach is query, yielding the items instead of collecting them; it
// stops when yield returns false.
func (s *store[T]) queryEach(f *filterSet, yield func(T) bool) {
	if f.selectsNothing() {
		return
	}
	if s.items.len() == 1 {
		if v, ok := s.onlyIfMatches(f); ok {
			yield(v)
		}
		return
	}
	scratch := querySlots.Get().(*[]int32)
	ids, done := s.candidates(f, (*scratch)[:0])
	defer func() { putQuerySlots(scratch, ids) }()
	for _, id := range ids {
		if sl := s.items.slot(id); s.matchesExcept(f, sl.key, sl.val, done) && !yield(sl.val) {
			return
		}
	}
}
