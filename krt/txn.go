package krt

import (
	"container/heap"
	"fmt"
	"slices"
	"time"
)

// maxPasses bounds how often one collection is recomputed within one
// transaction; only a dependency cycle reaches it.
const maxPasses = 64

// Txn is one transaction in progress. It is handed to the function given to
// Graph.Update and is valid only until that function returns.
type Txn struct {
	g       *Graph
	queue   idHeap
	queued  []bool // by node id
	passes  []int  // by node id
	touched []node
	inTxn   []bool // by node id
	current int    // id of the node being processed, -1 outside propagate
}

// newTxn returns the graph's transaction, reset. Transactions run one at a
// time under the write lock, so one value is reused for all of them.
func (g *Graph) newTxn() *Txn {
	tx := &g.txn
	n := len(g.nodes)
	tx.g = g
	tx.queue = tx.queue[:0]
	tx.queued = resize(tx.queued, n)
	tx.inTxn = resize(tx.inTxn, n)
	tx.passes = resize(tx.passes, n)
	clear(tx.touched)
	tx.touched = tx.touched[:0]
	tx.current = -1
	return tx
}

// resize returns s with length n, all zero.
func resize[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// schedule queues n for processing in this transaction.
func (tx *Txn) schedule(n node) {
	id := n.nodeID()
	if tx.queued[id] {
		return
	}
	tx.queued[id] = true
	heap.Push(&tx.queue, id)
}

// touch records that n has changes to finish at commit.
func (tx *Txn) touch(n node) {
	id := n.nodeID()
	if !tx.inTxn[id] {
		tx.inTxn[id] = true
		tx.touched = append(tx.touched, n)
	}
	// A node writing its own outputs propagates them when its processing
	// ends; only writes from outside (static inputs) need scheduling.
	if id != tx.current {
		tx.schedule(n)
	}
}

// propagate processes queued nodes in id order until none is left.
func (tx *Txn) propagate() {
	tx.g.busySince.Store(monoNow())
	for tx.queue.Len() > 0 {
		id := heap.Pop(&tx.queue).(int)
		tx.queued[id] = false
		n := tx.g.nodes[id]
		tx.passes[id]++
		if tx.passes[id] > maxPasses {
			n.recordError("", fmt.Errorf("recomputed %d times in one transaction: %w", maxPasses, ErrCycle), "")
			n.dropPending()
			continue
		}
		tx.current = id
		tx.g.busyNode.Store(int64(id) + 1)
		n.process(tx)
		tx.current = -1
	}
	tx.g.busyNode.Store(0)
}

// commit propagates the transaction, gives it a version if it changed
// anything, publishes it to readers, and hands each changed collection's
// events to its handlers, in that order: a handler that reads on receipt
// of a batch sees at least the batch's version. The caller holds the
// graph's write lock.
func (tx *Txn) commit() uint64 {
	tx.propagate()
	g := tx.g
	prev := g.version.Load()
	next := prev + 1
	events := 0
	g.commitTime = time.Time{}
	g.deliverMu.Lock()
	defer g.deliverMu.Unlock()
	for _, n := range tx.touched {
		events += n.finish(next)
	}
	committed := events > 0
	if !committed {
		next = prev
	}
	oldest, held := g.publish(next)
	if committed {
		g.commits.publish()
	}
	g.retire(tx.touched, committed, oldest, held)
	for _, n := range tx.touched {
		n.deliver()
	}
	g.updateSynced()
	return next
}

// commitClock returns the committing transaction's time, reading the
// clock once per commit. The caller holds the write lock.
func (g *Graph) commitClock() time.Time {
	if g.commitTime.IsZero() {
		g.commitTime = time.Now()
	}
	return g.commitTime
}

// retire ends the transaction's records of the touched nodes (see
// snapshot.go) and drops the older records no Read needs any more.
func (g *Graph) retire(touched []node, committed bool, oldest uint64, held bool) {
	if len(g.recorded) > 0 {
		kept := g.recorded[:0]
		for _, n := range g.recorded {
			if n.prune(oldest, held) {
				kept = append(kept, n)
			}
		}
		clear(g.recorded[len(kept):])
		g.recorded = kept
	}
	for _, n := range touched {
		if n.retire(committed, held) && !slices.Contains(g.recorded, n) {
			g.recorded = append(g.recorded, n)
		}
	}
}

// rollback undoes the writes made to static collections and forgets the
// transaction. It runs before propagation, so derived collections are
// untouched.
func (tx *Txn) rollback() {
	for _, n := range tx.touched {
		n.undo()
		n.dropPending()
		n.finish(0)
		n.retire(false, false)
	}
	tx.touched = nil
	tx.queue = nil
}

// updateSynced re-evaluates the nodes that have not synced yet, in id order,
// so that a node sees its upstreams' new state.
func (g *Graph) updateSynced() {
	if len(g.unsynced) == 0 {
		return
	}
	rest := g.unsynced[:0]
	for _, n := range g.unsynced {
		if !n.checkSynced() {
			rest = append(rest, n)
		}
	}
	clear(g.unsynced[len(rest):])
	g.unsynced = rest
}

type idHeap []int

func (h idHeap) Len() int           { return len(h) }
func (h idHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h idHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *idHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *idHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
