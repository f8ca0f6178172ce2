package krt

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// Snapshot reads: the writer changes each collection's items and indexes
// in place, and records, per collection and transaction, the value each
// changed key had before (store.changes, a changeLog). A reader at
// version V reads the current items through that record: a key changed
// by a transaction newer than V reads as its value before that
// transaction. The running transaction's record is consulted as long as
// it has not committed; committed records are kept only while a
// Graph.Read holds an older version, and dropped by the first commit
// after it ends. Readers and the writer share one short lock per
// collection (store.mu), held for one item's update by the writer and
// for one lookup, or one List's copy, by a reader; no reader waits for a
// transformation, and a write costs one uncontended lock more than
// before, nothing per reader.

// pinSet counts the versions open Graph.Read calls hold.
type pinSet struct {
	mu     sync.Mutex
	counts map[uint64]int // guarded by mu
	open   atomic.Int32   // number of open Reads, read without mu
}

// pin returns the last committed version, held until unpin.
func (g *Graph) pin() uint64 {
	p := &g.pins
	p.mu.Lock()
	defer p.mu.Unlock()
	v := g.version.Load()
	if p.counts == nil {
		p.counts = map[uint64]int{}
	}
	p.counts[v]++
	p.open.Add(1)
	return v
}

func (g *Graph) unpin(v uint64) {
	p := &g.pins
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.counts[v]--; p.counts[v] == 0 {
		delete(p.counts, v)
	}
	p.open.Add(-1)
}

// publish makes version v the committed one and reports the oldest
// version a Read holds (ok false when none), under the same lock as pin,
// so a Read either sees v or is counted in the answer.
func (g *Graph) publish(v uint64) (oldest uint64, ok bool) {
	p := &g.pins
	p.mu.Lock()
	defer p.mu.Unlock()
	g.version.Store(v)
	return p.oldestLocked()
}

func (p *pinSet) oldestLocked() (oldest uint64, ok bool) {
	for v := range p.counts {
		if !ok || v < oldest {
			oldest, ok = v, true
		}
	}
	return oldest, ok
}

// Snapshot is one committed version of every collection of a graph,
// handed to the function given to Graph.Read and valid until it returns.
// Reads through it (Collection.At) all observe that version while writers
// commit newer ones.
type Snapshot struct {
	g        *Graph
	version  uint64
	released atomic.Bool
}

// Version returns the version the snapshot holds.
func (s *Snapshot) Version() uint64 { return s.version }

// Read calls fn with a snapshot of the last committed version of every
// collection: reads through it (c.At(s).Get, List, Len, Lookup) all
// observe that one version, while transactions go on and commit newer
// ones. Read never waits for a running transaction and never delays one;
// while it is open, each commit keeps the old values of what it changed,
// which the first commit after Read returns drops. fn must not write to
// the graph (it panics) and must not keep s.
func (g *Graph) Read(fn func(s *Snapshot)) {
	if g.writing.Load() {
		checkReadInsideWriter()
	}
	snap := &Snapshot{g: g, version: g.pin()}
	defer func() {
		snap.released.Store(true)
		g.unpin(snap.version)
	}()
	fn(snap)
}

// View is a collection as of one Snapshot: every method observes the
// snapshot's version. It is valid while the snapshot is.
type View[T any] struct {
	s       *store[T]
	version uint64
	snap    *Snapshot
}

// At implements Collection.
func (s *store[T]) At(snap *Snapshot) View[T] {
	if snap.g != s.g {
		panic(fmt.Sprintf("krt: %s.At with a snapshot of another graph", s.name))
	}
	return View[T]{s: s, version: snap.version, snap: snap}
}

func (v View[T]) check() {
	if v.snap.released.Load() {
		panic(fmt.Sprintf("krt: a View of %s used after its Graph.Read returned", v.s.name))
	}
}

// Get returns the item with the given key, and whether it exists.
func (v View[T]) Get(key string) (T, bool) {
	v.check()
	return v.s.getAt(v.version, key)
}

// List returns every item, ordered by key.
func (v View[T]) List() []T {
	v.check()
	return v.s.listAt(v.version)
}

// Len returns the number of items.
func (v View[T]) Len() int {
	v.check()
	return v.s.lenAt(v.version)
}

// Lookup returns the items idx files under key, ordered by item key. It
// panics if idx belongs to another collection.
func (v View[T]) Lookup(idx Index[T], key string) []T {
	v.check()
	if idx.s != v.s {
		panic(fmt.Sprintf("krt: View.Lookup on %s with an index of another collection", v.s.name))
	}
	return v.s.lookupAt(v.version, idx.id, key)
}

// undoRecord is what one committed transaction changed in a collection:
// each key's value before it. It is kept while a Read holds an older
// version, and never changes.
type undoRecord[T any] struct {
	version uint64
	changes changeLog[T]
	// loaded says the transaction was a load (see load.go): the
	// collection was empty before it, and the log is empty.
	loaded bool
}

// readVersion returns the version a plain Get or List reads, refusing a
// read from inside the running transaction.
func (g *Graph) readVersion() uint64 {
	if g.writing.Load() {
		checkReadInsideWriter()
	}
	return g.version.Load()
}

// before returns the value key had at version v, when a transaction newer
// than v changed it (found true); otherwise the current item is v's. The
// caller holds s.mu for reading.
func (s *store[T]) beforeLocked(v uint64, key string) (old T, had, found bool) {
	for i := range s.kept { // oldest first: the first newer record has v's value
		if u := &s.kept[i]; u.version > v {
			if pc := u.changes.get(key); pc != nil {
				return pc.old, pc.hadOld, true
			}
			if u.loaded {
				return old, false, true
			}
		}
	}
	if s.liveVersion > v {
		if pc := s.changes.get(key); pc != nil {
			return pc.old, pc.hadOld, true
		}
		if s.loading {
			return old, false, true
		}
	}
	return old, false, false
}

// overlaidLocked reports whether any record must be consulted at v.
func (s *store[T]) overlaidLocked(v uint64) bool {
	if s.liveVersion > v && (s.changes.len() > 0 || s.loading) {
		return true
	}
	return len(s.kept) > 0 && s.kept[len(s.kept)-1].version > v
}

func (s *store[T]) getAt(v uint64, key string) (T, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.emptyAtLocked(v) {
		var zero T
		return zero, false
	}
	if old, had, found := s.beforeLocked(v, key); found {
		return old, had
	}
	return s.items.get(key)
}

// keysAtLocked returns the keys present at v, unordered.
func (s *store[T]) keysAtLocked(v uint64) []string {
	if s.emptyAtLocked(v) {
		return nil
	}
	keys := make([]string, 0, s.items.len())
	if !s.overlaidLocked(v) {
		for k := range s.items.keys() {
			keys = append(keys, k)
		}
		return keys
	}
	for k := range s.items.keys() {
		if _, had, found := s.beforeLocked(v, k); !found || had {
			keys = append(keys, k)
		}
	}
	s.forChangedLocked(v, func(k string) {
		if !s.items.has(k) {
			if _, had, _ := s.beforeLocked(v, k); had {
				keys = append(keys, k)
			}
		}
	})
	return keys
}

// forChangedLocked calls fn once for each key a record newer than v holds.
func (s *store[T]) forChangedLocked(v uint64, fn func(key string)) {
	seen := map[string]struct{}{}
	visit := func(changes *changeLog[T]) {
		for i := range changes.list {
			if k := changes.list[i].key; !has(seen, k) {
				seen[k] = struct{}{}
				fn(k)
			}
		}
	}
	for i := range s.kept {
		if s.kept[i].version > v {
			visit(&s.kept[i].changes)
		}
	}
	if s.liveVersion > v {
		visit(&s.changes)
	}
}

// valueAtLocked returns the item under key at v.
func (s *store[T]) valueAtLocked(v uint64, key string) (T, bool) {
	if old, had, found := s.beforeLocked(v, key); found {
		return old, had
	}
	return s.items.get(key)
}

func (s *store[T]) listAt(v uint64) []T {
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys := s.keysAtLocked(v)
	return s.valuesAtLocked(v, keys)
}

// valuesAtLocked sorts keys and returns their items at v.
func (s *store[T]) valuesAtLocked(v uint64, keys []string) []T {
	sort.Strings(keys)
	out := make([]T, 0, len(keys))
	for _, k := range keys {
		if item, ok := s.valueAtLocked(v, k); ok {
			out = append(out, item)
		}
	}
	return out
}

func (s *store[T]) lenAt(v uint64) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.loadedAfterLocked(v) {
		return len(s.keysAtLocked(v))
	}
	n := s.items.len()
	if !s.overlaidLocked(v) {
		return n
	}
	s.forChangedLocked(v, func(k string) {
		now := s.items.has(k)
		_, had, _ := s.beforeLocked(v, k)
		switch {
		case had && !now:
			n++
		case !had && now:
			n--
		}
	})
	return n
}

// lookupAt returns the items index id files under key at v: those filed
// now, and those a newer transaction changed, each checked against its
// value at v.
func (s *store[T]) lookupAt(v uint64, id int, key string) []T {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.emptyAtLocked(v) {
		return nil
	}
	ix := s.indexes[id]
	set := ix.m[key]
	filed := set.appendTo(nil)
	if !set.sorted() {
		s.items.sortIDs(filed)
	}
	if !s.overlaidLocked(v) {
		out := make([]T, len(filed))
		for i, id := range filed {
			out[i] = s.items.slot(id).val
		}
		return out
	}
	files := func(k string) bool {
		item, ok := s.valueAtLocked(v, k)
		return ok && slices.Contains(ix.keys(item), key)
	}
	keys := make([]string, 0, len(filed))
	for _, id := range filed {
		k := s.items.keyOf(id)
		if _, _, changed := s.beforeLocked(v, k); !changed || files(k) {
			keys = append(keys, k)
		}
	}
	s.forChangedLocked(v, func(k string) {
		if id, now := s.items.find(k); (!now || !set.has(id)) && files(k) {
			keys = append(keys, k)
		}
	})
	return s.valuesAtLocked(v, keys)
}

// indexKeysAt returns the index keys of index id with an item at v.
func (s *store[T]) indexKeysAt(v uint64, id int) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.emptyAtLocked(v) {
		return nil
	}
	ix := s.indexes[id]
	if !s.overlaidLocked(v) {
		out := make([]string, 0, len(ix.m))
		for k := range ix.m {
			out = append(out, k)
		}
		return out
	}
	seen := map[string]struct{}{}
	for _, k := range s.keysAtLocked(v) {
		item, _ := s.valueAtLocked(v, k)
		for _, ik := range ix.keys(item) {
			seen[ik] = struct{}{}
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	return out
}

// retire ends the transaction's record of s: kept when the transaction
// committed and a Read holds an older version (held), else cleared for
// reuse. It reports whether s keeps any record; Graph.retire prunes them.
func (s *store[T]) retire(committed, held bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if committed && held && (s.changes.len() > 0 || s.loading) {
		s.kept = append(s.kept, undoRecord[T]{version: s.liveVersion, changes: s.changes, loaded: s.loading})
		s.changes = changeLog[T]{lastBig: s.changes.len() > largeChanges} // the record holds the array
	} else {
		s.changes.reset()
	}
	s.liveVersion, s.loading = 0, false
	return len(s.kept) > 0
}

func has(set map[string]struct{}, k string) bool {
	_, ok := set[k]
	return ok
}

// pruneLocked drops the records that no Read needs: those of versions not
// newer than the oldest one held, all when none is.
func (s *store[T]) pruneLocked(oldest uint64, ok bool) {
	n := 0
	for _, u := range s.kept {
		if ok && u.version > oldest {
			s.kept[n] = u
			n++
		}
	}
	clear(s.kept[n:])
	s.kept = s.kept[:n]
	if n == 0 {
		s.kept = nil
	}
}

// prune implements node.
func (s *store[T]) prune(oldest uint64, ok bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked(oldest, ok)
	return len(s.kept) > 0
}
