package krt

import (
	"fmt"
	"slices"
	"sync/atomic"
)

// Index is a secondary index over a collection: each item is filed under
// zero or more index keys. Look items up with Lookup, or from a
// transformation with FilterIndex, which records a dependency on exactly
// that index key.
type Index[T any] struct {
	s  *store[T]
	id int
}

type indexState[T any] struct {
	name string
	keys func(T) []string
	m    map[string]*keySet
}

// NewIndex adds an index named name to c, filing each item under the keys
// keys returns, and builds it from the current items. It is maintained in
// the same transaction as the items, so lookups are consistent with Get.
func NewIndex[T any](c Collection[T], name string, keys func(T) []string) Index[T] {
	s := c.core()
	s.g.lockWrite()
	defer s.g.unlockWrite()
	ix := &indexState[T]{name: name, keys: keys, m: map[string]*keySet{}}
	for id, sl := range s.items.all() {
		for _, ik := range keys(sl.val) {
			addTo(ix.m, ik, &s.items, id)
		}
	}
	s.mu.Lock()
	s.indexes = append(s.indexes, ix)
	s.mu.Unlock()
	return Index[T]{s: s, id: len(s.indexes) - 1}
}

// Name returns the index's name.
func (i Index[T]) Name() string {
	i.s.mu.RLock()
	defer i.s.mu.RUnlock()
	return i.s.indexes[i.id].name
}

// Lookup returns the items filed under key, ordered by item key, at the
// last committed version. It never waits for a running transaction.
func (i Index[T]) Lookup(key string) []T { return i.s.lookupAt(i.s.g.readVersion(), i.id, key) }

// Keys returns the index keys that have at least one item, unordered, at
// the last committed version.
func (i Index[T]) Keys() []string { return i.s.indexKeysAt(i.s.g.readVersion(), i.id) }

// addTo files slot id of t under ik.
func addTo[K comparable, T any](m map[K]*keySet, ik K, t *itemTable[T], id int32) {
	set := m[ik]
	if set == nil {
		set = &keySet{}
		m[ik] = set
	}
	addSlot(set, t, id)
}

func removeFrom[K comparable](m map[K]*keySet, ik K, id int32) {
	if set := m[ik]; set != nil {
		set.remove(id)
		if set.len() == 0 {
			delete(m, ik)
		}
	}
}

// reindexUserLocked moves slot id from old's entries to v's in the indexes
// made with NewIndex, which readers read; the caller holds s.mu. Most
// changes keep an item's index keys: those leave the indexes untouched.
func (s *store[T]) reindexUserLocked(id int32, old T, hadOld bool, v T, hasNew bool) {
	both := hadOld && hasNew
	for _, ix := range s.indexes {
		var oks, nks []string
		if hadOld {
			oks = ix.keys(old)
		}
		if hasNew {
			nks = ix.keys(v)
		}
		if both && slices.Equal(oks, nks) {
			continue
		}
		for _, ik := range oks {
			removeFrom(ix.m, ik, id)
		}
		for _, ik := range nks {
			addTo(ix.m, ik, &s.items, id)
		}
	}
}

// reindexBuiltin moves slot id from old's entries to v's in the namespace,
// label and selector indexes, which only the writer reads.
func (s *store[T]) reindexBuiltin(id int32, old T, hadOld bool, v T, hasNew bool) {
	both := hadOld && hasNew
	if s.nsIdx != nil && !(both && s.acc.namespace(old) == s.acc.namespace(v)) {
		if hadOld {
			removeFrom(s.nsIdx, s.acc.namespace(old), id)
		}
		if hasNew {
			addTo(s.nsIdx, s.acc.namespace(v), &s.items, id)
		}
	}
	if s.labelIdx != nil && !(both && sameLabels(s.acc.labels(old), s.acc.labels(v))) {
		if hadOld {
			for k, lv := range s.acc.labels(old) {
				removeFrom(s.labelIdx, labelPair{k, lv}, id)
			}
		}
		if hasNew {
			for k, lv := range s.acc.labels(v) {
				addTo(s.labelIdx, labelPair{k, lv}, &s.items, id)
			}
		}
	}
	if s.selIdx != nil {
		s.reindexSelector(id, old, hadOld, v, hasNew)
	}
}

func (s *store[T]) reindexSelector(id int32, old T, hadOld bool, v T, hasNew bool) {
	op, oOK := labelPair{}, false
	if hadOld {
		op, oOK = minPair(s.acc.selector(old))
	}
	np, nOK := labelPair{}, false
	if hasNew {
		np, nOK = minPair(s.acc.selector(v))
	}
	if oOK == nOK && op == np {
		return
	}
	if oOK {
		removeFrom(s.selIdx, op, id)
	}
	if nOK {
		addTo(s.selIdx, np, &s.items, id)
	}
}

// ensureLazy builds one of the lazy indexes on first use. Fetches of one
// collection's inputs may run in parallel, so building takes lazyMu; a
// built index is only read until the writer's next change.
func (s *store[T]) ensureLazy(ready *atomic.Bool, build func()) {
	if ready.Load() {
		return
	}
	s.lazyMu.Lock()
	defer s.lazyMu.Unlock()
	if !ready.Load() {
		build()
		ready.Store(true)
	}
}

func (s *store[T]) ensureNamespaceIndex() {
	s.ensureLazy(&s.lazyNS, func() {
		s.nsIdx = map[string]*keySet{}
		for id, sl := range s.items.all() {
			addTo(s.nsIdx, s.acc.namespace(sl.val), &s.items, id)
		}
	})
}

func (s *store[T]) ensureLabelIndex() {
	s.ensureLazy(&s.lazyLabels, func() {
		s.labelIdx = map[labelPair]*keySet{}
		for id, sl := range s.items.all() {
			for lk, lv := range s.acc.labels(sl.val) {
				addTo(s.labelIdx, labelPair{lk, lv}, &s.items, id)
			}
		}
	})
}

func (s *store[T]) ensureSelectorIndex() {
	s.ensureLazy(&s.lazySel, func() {
		s.selIdx = map[labelPair]*keySet{}
		for id, sl := range s.items.all() {
			if p, ok := minPair(s.acc.selector(sl.val)); ok {
				addTo(s.selIdx, p, &s.items, id)
			}
		}
	})
}

func (s *store[T]) checkIndex(id int, owner any) {
	if owner != any(s) || id < 0 || id >= len(s.indexes) {
		panic(fmt.Sprintf("krt: FilterIndex on %s uses an index of another collection", s.name))
	}
}
