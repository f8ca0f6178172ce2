package krt

// A bulk load into an empty static collection, such as an embedder's
// first fill of its inputs, keeps no change log. The log would hold two
// values per key (its value before, absent, and its value now, which the
// items hold), made on the writer's goroutine and garbage at commit: at
// 100,000 pods about a third of the load's CPU and 14 MB. Instead the
// store says the transaction is a load (store.loading): every item it
// holds is new, and a reader at an older version sees the collection
// empty, without touching the items. Propagation and commit then read
// the items themselves: every item an add.

// loadMin is the fewest items a Set must write into an empty collection
// to be a load; smaller writes keep the log, as it costs them little.
const loadMin = 64

// beginLoad makes the open transaction a load if nothing else wrote to s
// in it and s is empty; n is how many items the write holds.
func (s *store[T]) beginLoad(n int) {
	if n < loadMin || s.items.len() > 0 || s.liveVersion != 0 || s.loading {
		return
	}
	s.mu.Lock()
	s.loading = true
	s.liveVersion = s.g.version.Load() + 1
	s.mu.Unlock()
}

// emptyAtLocked reports whether a reader at v sees s empty because the
// open transaction loads it. Such a reader must not touch the items: the
// writer fills them without taking s.mu (see lockItems).
func (s *store[T]) emptyAtLocked(v uint64) bool { return s.loading && s.liveVersion > v }

// loadedAfterLocked reports whether a load newer than v, open or kept
// for a Read, lies between v and the items: beforeLocked finds every key
// of it absent at v, which lenAt cannot count from the change logs.
func (s *store[T]) loadedAfterLocked(v uint64) bool {
	if s.emptyAtLocked(v) {
		return true
	}
	for i := range s.kept {
		if u := &s.kept[i]; u.loaded && u.version > v {
			return true
		}
	}
	return false
}

// propagateLoad is propagateChanges for a load: every item is an add. A
// static collection is written only before propagation, so it runs once
// per transaction and no item is added after it.
func (s *store[T]) propagateLoad(tx *Txn) {
	var zero T
	for _, sl := range s.items.all() {
		for _, down := range s.downs {
			down.markDirty(tx, sl.key)
		}
		s.trigger(tx, sl.key, zero, false, sl.val, true)
	}
}

// finishLoad is finish for a load: its items are its events, all adds.
func (s *store[T]) finishLoad(version uint64) int {
	n := s.items.len()
	if version == 0 || n == 0 {
		return 0
	}
	recent := s.g.recentScratch[:0]
	want := len(s.handlers) > 0
	var events []Event[T]
	var vals []T
	if want {
		events, vals = makeEvents[T](n)
	}
	for _, sl := range s.items.all() {
		if len(recent) < s.hist.size {
			recent = append(recent, EventRecord{Type: EventAdd.String(), Key: sl.key})
		}
		if want {
			vals = append(vals, sl.val)
			events = append(events, Event[T]{Type: EventAdd, Key: sl.key, New: &vals[len(vals)-1]})
		}
	}
	return s.publish(version, n, events, recent)
}

// undoLoad reverts a load: the collection was empty before it.
func (s *static[T]) undoLoad() {
	ids := make([]int32, 0, s.items.len())
	for id := range s.items.all() {
		ids = append(ids, id)
	}
	var zero T
	for _, id := range ids {
		old := s.items.slot(id).val
		s.reindexUserLocked(id, old, true, zero, false)
		s.reindexBuiltin(id, old, true, zero, false)
		s.items.deleteAt(id)
	}
}
