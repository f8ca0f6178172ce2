package krt

// node is the type-erased view the graph has of a collection.
type node interface {
	nodeID() int
	nodeName() string
	// process recomputes the node's pending inputs and marks the
	// dependents of its changes.
	process(tx *Txn)
	// dropPending forgets pending recomputations.
	dropPending()
	// undo reverts writes made before propagation (static inputs only).
	undo()
	// finish turns the transaction's changes into the batch deliver hands
	// to each handler, tagged with version, and returns the number of
	// events. Version 0 makes no batch.
	finish(version uint64) int
	// deliver hands finish's batch to the handlers.
	deliver()
	// retire ends the transaction's record of changes: kept for readers
	// at older versions when committed and a Read holds one, else
	// dropped; it reports whether the node keeps any record.
	retire(committed, held bool) bool
	// prune drops the records no Read needs and reports whether any is
	// left.
	prune(oldest uint64, ok bool) bool
	// checkSynced updates the synced state and reports it.
	checkSynced() bool
	isSynced() bool
	recordError(key string, err error, stack string)
	countStall()
	// describe reports the node as node id at version v, reading only
	// what readers may; the edges come from cachedEdges.
	describe(id int, v uint64) CollectionInfo
	edges() []Edge
	// cacheEdges keeps edges() for cachedEdges; the caller holds the
	// write lock.
	cacheEdges()
	cachedEdges() []Edge
	explain(key string) (Explanation, bool)
	dumpItems(v uint64, prefix string, offset, limit int) ([]Item, int)
	// subGraph returns the sub-graph the node belongs to, nil for none.
	subGraph() *SubGraph
	// stop empties the node within tx and detaches it from its
	// upstreams and handlers (see SubGraph.Stop).
	stop(tx *Txn)
}

// downstream is told about every key its upstream changes.
type downstream interface {
	markDirty(tx *Txn, key string)
}

// dependent is a node that can be told one of its inputs must be recomputed.
type dependent interface {
	node
	markInput(tx *Txn, in *inputState)
}

// upstream is a node that records which dependents read it.
type upstream interface {
	node
	addDep(rec *fetchRec)
	removeDep(rec *fetchRec)
	filterString(f *filterSet) string
}
