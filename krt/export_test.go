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
