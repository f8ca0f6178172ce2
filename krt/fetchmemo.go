package krt

import (
	"sync/atomic"
	"unsafe"
)

// A change that many inputs read, such as a mesh config that every
// workload fetches, recomputes every one of them, and each runs its
// fetches again though what they fetch is unchanged. The reads of inputs
// that filter alike share one recorded filter (see shareFilter): the
// pods of one service each fetch the services selecting their labels.
// Such a filter keeps the result of its last query, and the fetch of an
// input that repeats the read, while its collection's items are as they
// were, copies that result rather than querying again: one query for the
// service's pods rather than one a pod.
//
// Only the recomputations of many inputs at once (memoMinInputs, a bulk
// recomputation) use and fill the memo, so that a single change's
// recomputation pays no copy for a result nobody else reads. A memo is
// one result a shared filter: it keeps the items of that result alive
// until the next bulk recomputation replaces it or the filter goes.

// memoMinInputs is the fewest inputs a recomputation must have for its
// fetches to use the memo: a bulk recomputation's.
const memoMinInputs = 64

// queryMemo is a shared filter's last query result, made when the
// queried collection's items were at gen; immutable once published.
type queryMemo[T any] struct {
	gen  uint64
	vals []T
}

// sharedMark is the memo of a shared filter before its first query.
var sharedMark = new(byte)

// markShared notes that f is the recorded filter of more than one read.
// Filing runs while other goroutines compute, hence the atomics.
func (f *filterSet) markShared() {
	atomic.CompareAndSwapPointer(&f.memo, nil, unsafe.Pointer(sharedMark))
}

// queryMemo is query for a fetch with fs that repeats a read recorded
// with kept, an equal filter: when kept is shared, it returns a copy of
// kept's last result if s's items have not changed since, and else
// queries and keeps the result. The caller holds what query needs.
func (s *store[T]) queryMemo(kept, fs *filterSet) []T {
	vals, ok := s.memoized(kept, fs)
	switch {
	case !ok:
		return s.query(fs) // not shared, or a singleton's: cheap anyway
	case vals == nil:
		return nil
	}
	return append(make([]T, 0, len(vals)), vals...)
}

// memoized returns kept's last result, querying with fs and keeping that
// when s's items have changed since; ok is false, and nothing queried,
// when kept is not shared or s holds one item at most, as then no memo
// is kept. The result is the memo itself: the caller must not change it.
func (s *store[T]) memoized(kept, fs *filterSet) (vals []T, ok bool) {
	p := atomic.LoadPointer(&kept.memo)
	if p == nil || s.items.len() <= 1 {
		return nil, false
	}
	if p != unsafe.Pointer(sharedMark) {
		if m := (*queryMemo[T])(p); m.gen == s.items.gen {
			return m.vals, true
		}
	}
	out := s.query(fs)
	if out != nil { // nil: fs selects nothing, which needs no memo
		m := &queryMemo[T]{gen: s.items.gen, vals: out}
		atomic.StorePointer(&kept.memo, unsafe.Pointer(m))
	}
	return out, true
}
