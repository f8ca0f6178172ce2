package krt

import "fmt"

// Static is a collection fed directly by its owner: the entry point of
// inputs into a graph. Every method is a transaction of its own; use
// Graph.Update with In to change several collections in one transaction.
type Static[T any] struct {
	*static[T]
}

type static[T any] struct {
	store[T]
	unsynced bool
}

// NewStatic returns an empty static collection. It is synced unless
// WithUnsynced is given.
func NewStatic[T any](g Owner, opts ...Option) Static[T] {
	o := buildOptions(opts)
	s := &static[T]{unsynced: o.unsynced}
	s.init(g, "static", o)
	s.g.construct(s, nil)
	return Static[T]{s}
}

func (s *static[T]) process(tx *Txn) { s.propagateChanges(tx) }
func (s *static[T]) dropPending()    {}

func (s *static[T]) checkSynced() bool {
	if !s.unsynced {
		s.markSyncedLocked()
	}
	return s.synced
}

// Set adds or replaces items and returns the committed version.
func (s Static[T]) Set(items ...T) uint64 {
	return s.g.Update(func(tx *Txn) { s.In(tx).Set(items...) })
}

// Delete removes the items with the given keys; absent keys are ignored.
func (s Static[T]) Delete(keys ...string) uint64 {
	return s.g.Update(func(tx *Txn) { s.In(tx).Delete(keys...) })
}

// SetLater is Set queued with Graph.UpdateLater: it returns at once and
// commits batched with the other queued updates, in queue order. A
// source feeding a stream of changes (an informer's) writes this way.
// Queued writes to a collection whose sub-graph has stopped are dropped.
func (s Static[T]) SetLater(items ...T) {
	s.g.UpdateLater(func(tx *Txn) {
		if !s.stopped {
			s.In(tx).Set(items...)
		}
	})
}

// DeleteLater is Delete queued as SetLater is.
func (s Static[T]) DeleteLater(keys ...string) {
	s.g.UpdateLater(func(tx *Txn) {
		if !s.stopped {
			s.In(tx).Delete(keys...)
		}
	})
}

// Reset replaces the whole content with items.
func (s Static[T]) Reset(items []T) uint64 {
	return s.g.Update(func(tx *Txn) { s.In(tx).Reset(items) })
}

// Modify is a conditional update of one key: fn receives the current value
// (ok false when absent) and returns the value to store and whether to
// store it; returning keep false with ok true leaves the item as it is.
// Use Delete within the same Update to remove conditionally.
func (s Static[T]) Modify(key string, fn func(old T, ok bool) (v T, keep bool)) uint64 {
	return s.g.Update(func(tx *Txn) { s.In(tx).Modify(key, fn) })
}

// MarkSynced marks a collection created WithUnsynced as holding its
// complete initial state.
func (s Static[T]) MarkSynced() {
	s.g.Update(func(tx *Txn) {
		s.unsynced = false
	})
}

// In returns a writer that applies its changes to s as part of tx.
func (s Static[T]) In(tx *Txn) Writer[T] {
	if tx.g != s.g {
		panic("krt: Static.In called with a transaction of another graph")
	}
	if s.stopped {
		panic(fmt.Sprintf("krt: write to %q, whose sub-graph has stopped", s.name))
	}
	return Writer[T]{s: s.static, tx: tx}
}

// Writer changes a Static collection within one transaction. It is valid
// only inside the Graph.Update call that produced its Txn.
type Writer[T any] struct {
	s  *static[T]
	tx *Txn
}

// Get returns the item under key as the transaction sees it.
func (w Writer[T]) Get(key string) (T, bool) {
	v, ok := w.s.items.get(key)
	return v, ok
}

// Set adds or replaces items.
func (w Writer[T]) Set(items ...T) {
	if w.s.items.len() == 0 && len(items) > 64 {
		w.s.mu.Lock()
		w.s.items.reserve(len(items)) // a bulk load: size once
		w.s.mu.Unlock()
	}
	w.s.beginLoad(len(items))
	w.s.changeHint = len(items)
	for _, v := range items {
		w.set(w.s.acc.key(v), v)
	}
	w.s.changeHint = 0
}

func (w Writer[T]) set(key string, v T) { w.s.put(w.tx, key, v) }

// Delete removes the items with the given keys.
func (w Writer[T]) Delete(keys ...string) {
	for _, k := range keys {
		w.s.remove(w.tx, k)
	}
}

// Reset replaces the whole content with items.
func (w Writer[T]) Reset(items []T) {
	keep := make(map[string]struct{}, len(items))
	for _, v := range items {
		keep[w.s.acc.key(v)] = struct{}{}
	}
	var gone []string
	for k := range w.s.items.keys() {
		if _, ok := keep[k]; !ok {
			gone = append(gone, k)
		}
	}
	w.Delete(gone...)
	w.Set(items...)
}

// Modify is the conditional update described at Static.Modify.
func (w Writer[T]) Modify(key string, fn func(old T, ok bool) (T, bool)) {
	old, ok := w.s.items.get(key)
	if v, keep := fn(old, ok); keep {
		w.set(key, v)
	}
}

// undo reverts the open transaction's writes: only a static collection is
// written before propagation, so only it has any to revert.
func (s *static[T]) undo() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loading {
		s.undoLoad()
		s.loading = false
	}
	for i := range s.changes.list {
		pc := &s.changes.list[i]
		id, ok := s.items.find(pc.key)
		var cur T
		if ok {
			cur = s.items.slot(id).val
		}
		switch {
		case pc.hadOld:
			id = s.items.set(pc.key, pc.old)
		case ok:
			s.items.deleteAt(id) // the indexes forget id by number alone
		}
		s.reindexUserLocked(id, cur, ok, pc.old, pc.hadOld)
		s.reindexBuiltin(id, cur, ok, pc.old, pc.hadOld)
	}
	s.changes.reset()
	s.liveVersion = 0
	s.unprop = s.unprop[:0]
}
