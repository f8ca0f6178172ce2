package krt

import (
	"sync/atomic"
	"unsafe"
)

// ForceParallel makes g compute every collection's dirty inputs on all its
// workers (see WithParallelism), whatever their number and GOMAXPROCS, so
// tests exercise the parallel path.
func ForceParallel(g *Graph) {
	g.lock.lock()
	defer g.lock.unlock()
	g.parallelMin, g.parallelChunk = 2, 1
	g.forceParallel = true
}

// ParallelRuns reports how many times g has computed a collection's inputs
// in parallel.
func ParallelRuns(g *Graph) uint64 { return g.parallelRuns.Load() }

// ScratchCapacities reports the capacities of the arrays c, a collection
// made by NewCollection from inputs of type I, may keep between
// transactions: its dirty list, its queue of changes to propagate and
// its changes' log.
func ScratchCapacities[I, O any](c Collection[O]) (dirty, unprop, changes int) {
	s := c.core()
	d := s.self().(*derived[I, O])
	return cap(d.dirty), cap(s.unprop), cap(s.changes.list)
}

// QueryMemos reports how many inputs of c, a collection made by
// NewCollection from inputs of type I, hold a read whose shared filter
// keeps a query's result (see fetchmemo.go).
func QueryMemos[I, O any](c Collection[O]) int {
	d := c.core().self().(*derived[I, O])
	n := 0
	for _, st := range d.inputs.all() {
		if st == nil {
			continue
		}
		has := false
		st.reads.each(func(r *fetchRec) {
			p := atomic.LoadPointer(&r.filter.memo)
			has = has || (p != nil && p != unsafe.Pointer(sharedMark))
		})
		if has {
			n++
		}
	}
	return n
}

// ChangesLogged reports how many keys the open transaction's change log
// of c holds; call it inside Graph.Update.
func ChangesLogged[T any](c Collection[T]) int { return c.core().changes.len() }

// SelectAliases reports how many label maps the filters that c's inputs'
// reads keep have learned as aliases (see mapalias.go), each filter
// counted once.
func SelectAliases[I, O any](c Collection[O]) int {
	d := c.core().self().(*derived[I, O])
	seen, n := map[*filterSet]bool{}, 0
	for _, st := range d.inputs.all() {
		if st == nil {
			continue
		}
		st.reads.each(func(r *fetchRec) {
			if a := (*mapAliases)(atomic.LoadPointer(&r.filter.aliases)); a != nil && !seen[r.filter] {
				seen[r.filter] = true
				n += int(a.n.Load())
			}
		})
	}
	return n
}
