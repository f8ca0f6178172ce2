package krt

import "runtime/debug"

// join is a collection holding, for each key present in any of its
// sources, either the first source's item (first wins) or the merge of
// every source's item.
type join[T any] struct {
	store[T]
	sources []*store[T]
	merge   func([]T) T // nil: first wins
	dirty   map[string]struct{}
}

// Join returns a collection of every key present in any of cols; where
// several hold a key, the earliest collection in cols wins.
func Join[T any](g Owner, cols []Collection[T], opts ...Option) Collection[T] {
	return newJoin(g, cols, nil, opts)
}

// JoinMerge returns a collection of every key present in any of cols; the
// item is merge applied to the items of every collection holding the key,
// in the order of cols.
func JoinMerge[T any](g Owner, cols []Collection[T], merge func(items []T) T, opts ...Option) Collection[T] {
	return newJoin(g, cols, merge, opts)
}

func newJoin[T any](g Owner, cols []Collection[T], merge func([]T) T, opts []Option) *join[T] {
	if len(cols) == 0 {
		panic("krt: Join of no collections")
	}
	o := buildOptions(opts)
	j := &join[T]{merge: merge}
	for _, c := range cols {
		j.sources = append(j.sources, c.core())
	}
	if o.keyFunc == nil {
		o.keyFunc = j.sources[0].acc.key
	}
	j.init(g, "join", o)
	j.g.construct(j, func(tx *Txn) {
		for _, src := range j.sources {
			src.downs = append(src.downs, j)
			for k := range src.items.keys() {
				j.markDirty(tx, k)
			}
		}
	})
	return j
}

func (j *join[T]) markDirty(tx *Txn, key string) {
	if !j.stopped {
		markKey(&j.dirty, key)
		tx.schedule(j)
	}
}

func (j *join[T]) dropPending() { j.dirty = nil }

func (j *join[T]) process(tx *Txn) {
	dirty := j.dirty
	j.dirty = nil
	if j.stopped { // emptied by Stop: only tell dependents
		dirty = nil
	}
	for k := range dirty {
		j.stats.recomputes.Add(1)
		if j.merge == nil {
			j.putFirst(tx, k)
			continue
		}
		var found []T
		for _, src := range j.sources {
			if v, ok := src.items.get(k); ok {
				found = append(found, v)
			}
		}
		switch {
		case len(found) == 0:
			j.remove(tx, k)
		default:
			if v, ok := j.mergeSafely(k, found); ok {
				j.put(tx, k, v)
			}
		}
	}
	j.propagateChanges(tx)
}

// putFirst gives key the item of the first source holding it, or removes
// it when none does. It gathers nothing: a join of large collections
// recomputes every key when built, and a slice per key would be as many
// allocations.
func (j *join[T]) putFirst(tx *Txn, key string) {
	for _, src := range j.sources {
		if v, ok := src.items.get(key); ok {
			j.put(tx, key, v)
			return
		}
	}
	j.remove(tx, key)
}

// mergeSafely runs merge; on a panic it records the error and reports
// false, so the key keeps its last good item.
func (j *join[T]) mergeSafely(key string, items []T) (out T, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			pe := &panicError{value: r, stack: string(debug.Stack())}
			j.recordError(key, pe, pe.stack)
			ok = false
		}
	}()
	return j.merge(items), true
}

func (j *join[T]) checkSynced() bool {
	if j.synced {
		return true
	}
	for _, s := range j.sources {
		if !s.synced {
			return false
		}
	}
	j.markSyncedLocked()
	return true
}
