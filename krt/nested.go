package krt

import (
	"slices"
	"sort"
)

// nestedJoin is a collection holding the items of every collection that
// an outer collection of collections holds, as they come and go.
type nestedJoin[T any] struct {
	store[T]
	outer      *store[Collection[T]]
	outerDown  *nestedOuter[T]
	sources    map[string]*store[T] // outer key -> inner collection
	order      []string             // the keys of sources, sorted
	dirty      map[string]struct{}  // inner keys to re-evaluate
	outerDirty map[string]struct{}  // outer keys whose collection may have changed
}

// nestedOuter is how the outer collection tells a nestedJoin of its
// changes, apart from the inner collections' changes.
type nestedOuter[T any] struct{ j *nestedJoin[T] }

func (o *nestedOuter[T]) markDirty(tx *Txn, key string) {
	if !o.j.stopped {
		markKey(&o.j.outerDirty, key)
		tx.schedule(o.j)
	}
}

// NestedJoin returns a collection of the items of every collection in
// cols, a collection of collections: one per remote cluster, say, added
// and removed while the graph runs. When a collection enters cols its
// items appear; when it leaves (or its sub-graph stops), they go. Where
// several collections hold a key, the one under the smallest key of cols
// wins, so the result does not depend on arrival order.
//
// The items are keyed like any item (ResourceName or WithKey). A
// collection of collections is keyed by collection name and compared by
// identity unless told otherwise. The joined collection is synced once
// cols and every collection in it are.
func NestedJoin[T any](g Owner, cols Collection[Collection[T]], opts ...Option) Collection[T] {
	o := buildOptions(opts)
	j := &nestedJoin[T]{outer: cols.core(), sources: map[string]*store[T]{}}
	j.outerDown = &nestedOuter[T]{j: j}
	j.init(g, "nested-join", o)
	j.g.construct(j, func(tx *Txn) {
		j.outer.downs = append(j.outer.downs, j.outerDown)
		for k := range j.outer.items.keys() {
			j.outerDown.markDirty(tx, k)
		}
	})
	return j
}

func (j *nestedJoin[T]) markDirty(tx *Txn, key string) {
	if !j.stopped {
		markKey(&j.dirty, key)
		tx.schedule(j)
	}
}

func (j *nestedJoin[T]) dropPending() { j.dirty, j.outerDirty = nil, nil }

func (j *nestedJoin[T]) process(tx *Txn) {
	outerDirty, dirty := j.outerDirty, j.dirty
	j.outerDirty, j.dirty = nil, nil
	if j.stopped {
		outerDirty, dirty = nil, nil
	}
	if len(outerDirty) > 0 && dirty == nil {
		dirty = map[string]struct{}{}
	}
	for k := range outerDirty {
		j.resource(k, dirty)
	}
	for k := range dirty {
		j.stats.recomputes.Add(1)
		if v, ok := j.winner(k); ok {
			j.put(tx, k, v)
		} else {
			j.remove(tx, k)
		}
	}
	j.propagateChanges(tx)
}

// resource follows outer key k to the collection it now holds, if any,
// and adds every key of the old and the new collection to dirty.
func (j *nestedJoin[T]) resource(k string, dirty map[string]struct{}) {
	var next *store[T]
	if c, ok := j.outer.items.get(k); ok && c != nil {
		next = c.core()
	}
	prev := j.sources[k]
	if prev == next {
		return
	}
	if prev != nil {
		prev.removeDown(j)
		for key := range prev.items.keys() {
			dirty[key] = struct{}{}
		}
		delete(j.sources, k)
	}
	if next != nil {
		next.downs = append(next.downs, j)
		for key := range next.items.keys() {
			dirty[key] = struct{}{}
		}
		j.sources[k] = next
	}
	j.order = j.order[:0]
	for key := range j.sources {
		j.order = append(j.order, key)
	}
	sort.Strings(j.order)
}

// winner returns the item under key of the first collection, by outer
// key, that holds it.
func (j *nestedJoin[T]) winner(key string) (T, bool) {
	for _, k := range j.order {
		if v, ok := j.sources[k].items.get(key); ok {
			return v, true
		}
	}
	var zero T
	return zero, false
}

func (j *nestedJoin[T]) checkSynced() bool {
	if j.synced {
		return true
	}
	if !j.outer.synced {
		return false
	}
	for _, s := range j.sources {
		if !s.synced {
			return false
		}
	}
	j.markSyncedLocked()
	return true
}

func (j *nestedJoin[T]) edges() []Edge {
	out := []Edge{{From: j.outer.id, To: j.id, Kind: "primary"}}
	for _, k := range j.order {
		if s := j.sources[k]; !s.stopped {
			out = append(out, Edge{From: s.id, To: j.id, Kind: "join"})
		}
	}
	slices.SortFunc(out, func(a, b Edge) int { return a.From - b.From })
	return out
}

func (j *nestedJoin[T]) stop(tx *Txn) {
	j.stopStore(tx)
	j.outer.removeDown(j.outerDown)
	for _, s := range j.sources {
		s.removeDown(j)
	}
	j.sources, j.order, j.dirty, j.outerDirty = nil, nil, nil, nil
}

// markKey adds key to the set *m, which it makes on first use.
func markKey(m *map[string]struct{}, key string) {
	if *m == nil {
		*m = map[string]struct{}{}
	}
	(*m)[key] = struct{}{}
}
