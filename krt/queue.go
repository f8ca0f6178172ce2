package krt

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
)

// Queued writes: group commit. A writer that feeds a stream of changes,
// such as an informer in a rollout, pays a whole transaction per change
// when it calls Update for each. UpdateLater queues the change instead
// and returns at once; one goroutine commits everything queued meanwhile
// as one transaction, in queue order, then whatever was queued during
// that commit as the next. A lone change commits at once; under a burst
// the batches grow until the committer keeps up, and a large batch is
// computed in parallel (parallel.go). The goroutine exists only while the
// queue is not empty.

// writeQueue holds the graph's queued updates.
type writeQueue struct {
	mu       sync.Mutex
	fns      []func(*Txn)
	spare    []func(*Txn) // the last batch's array, for the next one
	draining bool         // a goroutine is committing
	// queued counts the updates queued, done those committed or dropped;
	// batches the transactions that committed them, dropped those that
	// panicked.
	queued, done, batches, dropped uint64
	// flushed is closed, and replaced, whenever a batch is done.
	flushed chan struct{}
}

// UpdateLater queues fn to run in a later transaction, after every fn
// queued before it, and returns at once. Queued updates commit together,
// in the order queued, as one transaction per batch; Flush waits for
// them. fn must write only through tx, and may run more than once: if
// another fn of its batch panics, the batch is undone, the panic logged
// (the graph's logger, with the stack) and that fn dropped, and the rest
// run again.
func (g *Graph) UpdateLater(fn func(tx *Txn)) {
	q := &g.queue
	q.mu.Lock()
	q.fns = append(q.fns, fn)
	q.queued++
	start := !q.draining
	q.draining = true
	q.mu.Unlock()
	if start {
		go g.drainQueue()
	}
}

// Flush waits until every update queued before it has committed (or been
// dropped) and returns the graph's version then; it returns ctx's error
// if ctx ends first. It must not be called inside a transaction, which
// the committer would wait for.
func (g *Graph) Flush(ctx context.Context) (uint64, error) {
	q := &g.queue
	q.mu.Lock()
	target := q.queued
	for q.done < target {
		ch := q.flushedLocked()
		q.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		q.mu.Lock()
	}
	q.mu.Unlock()
	return g.Version(), nil
}

// QueueInfo counts a graph's queued updates (Graph.UpdateLater).
type QueueInfo struct {
	// Waiting is how many are queued and not yet committed.
	Waiting uint64 `json:"waiting"`
	// Committed counts those committed, Batches the transactions that
	// committed them, and Dropped those that panicked and were dropped.
	Committed uint64 `json:"committed"`
	Batches   uint64 `json:"batches"`
	Dropped   uint64 `json:"dropped"`
}

func (q *writeQueue) info() QueueInfo {
	q.mu.Lock()
	defer q.mu.Unlock()
	return QueueInfo{Waiting: q.queued - q.done, Committed: q.done - q.dropped, Batches: q.batches, Dropped: q.dropped}
}

func (q *writeQueue) flushedLocked() chan struct{} {
	if q.flushed == nil {
		q.flushed = make(chan struct{})
	}
	return q.flushed
}

// drainQueue commits batches until the queue is empty.
func (g *Graph) drainQueue() {
	q := &g.queue
	for {
		q.mu.Lock()
		batch := q.fns
		if len(batch) == 0 {
			q.draining = false
			q.mu.Unlock()
			return
		}
		q.fns, q.spare = q.spare[:0], nil
		q.mu.Unlock()

		dropped := g.commitBatch(batch)

		q.mu.Lock()
		q.done += uint64(len(batch))
		q.batches++
		q.dropped += uint64(dropped)
		clear(batch) // let the closures go
		q.spare = batch[:0]
		if q.flushed != nil {
			close(q.flushed)
			q.flushed = nil
		}
		q.mu.Unlock()
	}
}

// commitBatch runs fns in one transaction and commits it; a fn that
// panics is dropped and the rest run again in a new one. It returns how
// many were dropped.
func (g *Graph) commitBatch(fns []func(*Txn)) (dropped int) {
	g.lockWrite()
	defer g.unlockWrite()
	for ; ; dropped++ {
		tx := g.newTxn()
		bad, err := runBatch(tx, fns)
		if bad < 0 {
			tx.commit()
			return dropped
		}
		tx.rollback()
		g.log.Error("krt: a queued update panicked; its writes are dropped", "error", err)
		fns = slices.Delete(slices.Clone(fns), bad, bad+1)
	}
}

// runBatch runs fns in tx, stopping at the first that panics: it returns
// that fn's position and the panic with its stack, or -1.
func runBatch(tx *Txn, fns []func(*Txn)) (bad int, err error) {
	bad = -1
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v\n%s", r, debug.Stack())
		}
	}()
	for i, fn := range fns {
		bad = i
		fn(tx)
	}
	return -1, nil
}
