package krt

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
