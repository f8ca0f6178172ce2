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
	// finish turns the transaction's changes into one batch per handler,
	// tagged with version, and returns the number of events. Version 0
	// discards the changes.
	finish(version uint64) int
	// checkSynced updates the synced state and reports it.
	checkSynced() bool
	isSynced() bool
	recordError(key string, err error, stack string)
	describe() CollectionInfo
	edges() []Edge
	explain(key string) (Explanation, bool)
	dumpItems(prefix string, offset, limit int) ([]Item, int)
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
	markDirty(tx *Txn, input string)
}

// upstream is a node that records which dependents read it.
type upstream interface {
	node
	addDep(rec *fetchRec)
	removeDep(rec *fetchRec)
	filterString(f *filterSet) string
}
