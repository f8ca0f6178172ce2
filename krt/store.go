package krt

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
)

// store holds the committed items of one collection and everything kept
// beside them: indexes, the reverse index of who fetched what, handlers,
// the open transaction's changes, counters and history. Every collection
// kind embeds one. Fields are guarded by the graph's commit lock unless
// noted.
type store[T any] struct {
	g    *Graph
	id   int
	name string
	kind string
	acc  accessors[T]

	items map[string]T

	indexes  []*indexState[T]
	nsIdx    map[string]map[string]struct{}    // built on first use
	labelIdx map[labelPair]map[string]struct{} // built on first use
	selIdx   map[labelPair]map[string]struct{} // by smallest selector pair; built on first use

	deps  dependents
	downs []downstream // collections taking this one as primary input

	sub     *SubGraph // nil: owned by the graph itself
	stopped bool      // its sub-graph stopped: detached, empty, read-only

	// The open transaction's changes: the value each changed key had
	// before it, and the keys whose dependents are not told yet.
	changes map[string]pendingChange[T]
	unprop  []string
	// changeHint, while a bulk write or recomputation runs, is how many
	// changes it may make: changes is made that large at once rather
	// than rehashed as it grows.
	changeHint int
	// unwatched is set while the transaction that constructs the
	// collection fills it. No handler, downstream or dependent can exist
	// yet, so noteChange records nothing: every item at commit is an add.
	unwatched bool

	handlers []*handler[T]
	synced   bool
	syncedCh chan struct{}

	stats stats
	hist  history
}

type pendingChange[T any] struct {
	old    T
	hadOld bool
	queued bool
}

type stats struct {
	recomputes, events, errors atomic.Uint64
	durations                  durationHistogram
}

func (s *store[T]) init(owner Owner, kind string, o options) {
	g, sub := owner.owner()
	s.g, s.sub = g, sub
	s.kind = kind
	s.name = o.name
	if s.name == "" {
		s.name = typeName[T]() + "/" + kind
	}
	s.acc = resolveAccessors[T](o, s.name)
	s.items = map[string]T{}
	s.syncedCh = make(chan struct{})
	s.hist.init(g.history)
}

func (s *store[T]) core() *store[T]  { return s }
func (s *store[T]) nodeID() int      { return s.id }
func (s *store[T]) nodeName() string { return s.name }

// Name implements Collection.
func (s *store[T]) Name() string { return s.name }

// Get implements Collection.
func (s *store[T]) Get(key string) (T, bool) {
	s.g.lock.rlock()
	defer s.g.lock.runlock()
	v, ok := s.items[key]
	return v, ok
}

// List implements Collection.
func (s *store[T]) List() []T {
	s.g.lock.rlock()
	defer s.g.lock.runlock()
	return s.sortedValues(nil)
}

// Len implements Collection.
func (s *store[T]) Len() int {
	s.g.lock.rlock()
	defer s.g.lock.runlock()
	return len(s.items)
}

// HasSynced implements Collection.
func (s *store[T]) HasSynced() bool {
	select {
	case <-s.syncedCh:
		return true
	default:
		return false
	}
}

// Synced implements Collection.
func (s *store[T]) Synced() <-chan struct{} { return s.syncedCh }

// WaitUntilSynced implements Collection.
func (s *store[T]) WaitUntilSynced(stop <-chan struct{}) bool {
	select {
	case <-s.syncedCh:
		return true
	case <-stop:
		return false
	}
}

func (s *store[T]) isSynced() bool { return s.synced }

func (s *store[T]) markSyncedLocked() {
	if !s.synced {
		s.synced = true
		close(s.syncedCh)
	}
}

// sortedValues returns the items with the given keys (all items when keys
// is nil), ordered by key.
func (s *store[T]) sortedValues(keys map[string]struct{}) []T {
	var ks []string
	if keys == nil {
		ks = make([]string, 0, len(s.items))
		for k := range s.items {
			ks = append(ks, k)
		}
	} else {
		ks = make([]string, 0, len(keys))
		for k := range keys {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	out := make([]T, 0, len(ks))
	for _, k := range ks {
		if v, ok := s.items[k]; ok {
			out = append(out, v)
		}
	}
	return out
}

// put stores v under key and reports whether anything changed. An equal
// value is a no-op: the early cutoff.
func (s *store[T]) put(tx *Txn, key string, v T) bool {
	old, had := s.items[key]
	if had && s.acc.equal(old, v) {
		return false
	}
	s.noteChange(tx, key, old, had)
	s.items[key] = v
	s.reindex(key, old, had, v, true)
	return true
}

// remove deletes key and reports whether it existed.
func (s *store[T]) remove(tx *Txn, key string) bool {
	old, had := s.items[key]
	if !had {
		return false
	}
	s.noteChange(tx, key, old, had)
	delete(s.items, key)
	var zero T
	s.reindex(key, old, true, zero, false)
	return true
}

func (s *store[T]) noteChange(tx *Txn, key string, old T, had bool) {
	if s.unwatched {
		tx.touch(s.self())
		return
	}
	if s.changes == nil {
		s.changes = make(map[string]pendingChange[T], s.changeHint)
	}
	pc, seen := s.changes[key]
	if !seen {
		pc = pendingChange[T]{old: old, hadOld: had}
	}
	if !pc.queued || !seen {
		pc.queued = true
		s.changes[key] = pc
		s.unprop = append(s.unprop, key)
	}
	tx.touch(s.self())
}

// self returns the node embedding s; set by each constructor.
func (s *store[T]) self() node { return s.g.nodes[s.id] }

// propagateChanges tells primary downstreams and fetching dependents about
// every key changed since the last call.
func (s *store[T]) propagateChanges(tx *Txn) {
	for _, key := range s.unprop {
		pc := s.changes[key]
		pc.queued = false
		s.changes[key] = pc
		nv, hasNew := s.items[key]
		for _, down := range s.downs {
			down.markDirty(tx, key)
		}
		s.trigger(tx, key, pc.old, pc.hadOld, nv, hasNew)
	}
	s.unprop = s.unprop[:0]
}

// finish implements node.
func (s *store[T]) finish(version uint64) int {
	if s.unwatched {
		return s.finishUnwatched(version)
	}
	if len(s.changes) == 0 {
		return 0
	}
	changes := s.changes
	s.unprop = s.unprop[:0]
	if cap(s.unprop) > 1024 {
		s.unprop = nil // a bulk load's scratch space is not worth keeping
	}
	// Reuse a small map for the next transaction; drop a large one, whose
	// buckets would stay allocated and slow every later iteration.
	if len(changes) <= 64 {
		defer clear(changes)
	} else {
		s.changes = nil
	}
	if version == 0 {
		return 0
	}
	events, recent, n := s.netEvents(changes)
	s.stats.events.Add(uint64(n))
	s.hist.events(version, recent)
	if len(events) > 0 {
		slices.SortFunc(events, func(a, b Event[T]) int { return strings.Compare(a.Key, b.Key) })
		b := Batch[T]{Version: version, Events: events}
		for _, h := range s.handlers {
			h.enqueue(b)
		}
	}
	return n
}

// finishUnwatched is finish for the transaction that constructed the
// collection: its items are its events, all adds, and no one is
// registered to receive them.
func (s *store[T]) finishUnwatched(version uint64) int {
	s.unwatched = false
	if version == 0 || len(s.items) == 0 {
		return 0
	}
	recent := make([]EventRecord, 0, min(len(s.items), s.hist.size))
	for key := range s.items {
		if len(recent) == cap(recent) {
			break
		}
		recent = append(recent, EventRecord{Type: EventAdd.String(), Key: key})
	}
	n := len(s.items)
	s.stats.events.Add(uint64(n))
	s.hist.events(version, recent)
	return n
}

// netEvents turns the transaction's changes into the events handlers get
// (none when no handler is registered), the records the history keeps, and
// the number of keys whose value changed.
func (s *store[T]) netEvents(changes map[string]pendingChange[T]) (events []Event[T], recent []EventRecord, n int) {
	want := len(s.handlers) > 0
	// vals holds what the events point to: one allocation, not one per
	// value. (A handler that keeps one pointer keeps the whole array.)
	var vals []T
	if want {
		events = make([]Event[T], 0, len(changes))
		vals = make([]T, 0, 2*len(changes))
	}
	for key, pc := range changes {
		nv, hasNew := s.items[key]
		var typ EventType
		switch {
		case !pc.hadOld && hasNew:
			typ = EventAdd
		case pc.hadOld && !hasNew:
			typ = EventDelete
		case pc.hadOld && hasNew && !s.acc.equal(pc.old, nv):
			typ = EventUpdate
		default:
			continue
		}
		n++
		// Only the last history-size events can be kept: collect no more.
		if len(recent) < s.hist.size {
			recent = append(recent, EventRecord{Type: typ.String(), Key: key})
		}
		if want {
			ev := Event[T]{Type: typ, Key: key}
			if pc.hadOld {
				vals = append(vals, pc.old)
				ev.Old = &vals[len(vals)-1]
			}
			if hasNew {
				vals = append(vals, nv)
				ev.New = &vals[len(vals)-1]
			}
			events = append(events, ev)
		}
	}
	return events, recent, n
}

// Register implements Collection.
func (s *store[T]) Register(fn func(Batch[T]), opts ...RegisterOption) *Registration {
	var o registerOptions
	for _, opt := range opts {
		opt(&o)
	}
	h := newHandler(s, fn)
	s.g.lock.lock()
	if s.stopped {
		s.g.lock.unlock()
		panic(fmt.Sprintf("krt: Register on %q, whose sub-graph has stopped", s.name))
	}
	if o.replay {
		items := s.sortedKeys()
		events := make([]Event[T], 0, len(items))
		for _, k := range items {
			v := s.items[k]
			events = append(events, Event[T]{Type: EventAdd, Key: k, New: &v})
		}
		h.queue = append(h.queue, Batch[T]{Version: s.g.version, Events: events})
		h.pendingReplay = true
	}
	s.handlers = append(s.handlers, h)
	s.g.lock.unlock()
	s.g.addHandler(h)
	return h.reg
}

func (s *store[T]) unregister(h *handler[T]) {
	s.g.lock.lock()
	s.handlers = slices.DeleteFunc(s.handlers, func(x *handler[T]) bool { return x == h })
	s.g.lock.unlock()
	s.g.removeHandler(h)
}

func (s *store[T]) sortedKeys() []string {
	ks := make([]string, 0, len(s.items))
	for k := range s.items {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func (s *store[T]) setID(id int) { s.id = id }

// undo implements node; only static collections have writes to revert.
func (s *store[T]) undo() {}
