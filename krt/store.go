package krt

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// store holds the committed items of one collection and everything kept
// beside them: indexes, the reverse index of who fetched what, handlers,
// the open transaction's changes, counters and history. Every collection
// kind embeds one. Fields are guarded by the graph's write lock unless
// noted; only the writer changes them.
type store[T any] struct {
	g    *Graph
	id   int
	name string
	kind string
	acc  accessors[T]

	// mu is held by the writer while it changes items, changes, undo,
	// liveVersion, indexes or an index's map, and by readers while they
	// read them (see snapshot.go). The writer reads them without it.
	mu    sync.RWMutex
	items itemTable[T]

	indexes  []*indexState[T]
	nsIdx    map[string]*keySet    // built on first use
	labelIdx map[labelPair]*keySet // built on first use
	selIdx   map[labelPair]*keySet // by smallest selector pair; built on first use
	// lazyMu serializes building those three, which parallel fetches
	// may ask for at once; the flags say which are built.
	lazyMu                      sync.Mutex
	lazyNS, lazyLabels, lazySel atomic.Bool

	deps  dependents
	downs []downstream // collections taking this one as primary input

	sub     *SubGraph // nil: owned by the graph itself
	stopped bool      // its sub-graph stopped: detached, empty, read-only

	// The open transaction's changes: the value each changed key had
	// before it and has now, and the positions in it of the keys whose
	// dependents are not told yet (those whose change's round is the
	// current round). liveVersion is the version the transaction commits
	// as, 0 when changes is empty.
	changes     changeLog[T]
	unprop      []int32
	round       uint32
	liveVersion uint64
	// kept holds committed transactions' changes, oldest first, while a
	// Graph.Read holds a version older than theirs.
	kept []undoRecord[T]
	// changeHint, while a bulk write or recomputation runs, is how many
	// changes it may make: changes is made that large at once rather
	// than regrown as it grows.
	changeHint int
	// loading says the open transaction is a load into the empty
	// collection, which keeps no change log (see load.go).
	loading bool
	// unwatched is set while the transaction that constructs the
	// collection fills it. No handler, downstream, dependent or reader
	// can reach it yet, so noteChange records nothing: every item at
	// commit is an add.
	unwatched bool

	handlers []*handler[T] // guarded by g.deliverMu
	outbox   Batch[T]      // the committing transaction's batch, until deliver
	synced   bool
	syncedCh chan struct{}

	stats     stats
	hist      history
	edgeCache atomic.Pointer[[]Edge] // edges() as of the last Describe between transactions
}

type stats struct {
	recomputes, events, errors, stalls atomic.Uint64
	durations                          durationHistogram
	// For Describe, which must not read the writer's maps: the number of
	// handlers, failing inputs and contested output keys.
	handlers, failing, conflicts atomic.Int32
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
	s.syncedCh = make(chan struct{})
	s.hist.init(g.history)
}

func (s *store[T]) core() *store[T]  { return s }
func (s *store[T]) nodeID() int      { return s.id }
func (s *store[T]) nodeName() string { return s.name }

// Name implements Collection.
func (s *store[T]) Name() string { return s.name }

// Get implements Collection.
func (s *store[T]) Get(key string) (T, bool) { return s.getAt(s.g.readVersion(), key) }

// List implements Collection.
func (s *store[T]) List() []T { return s.listAt(s.g.readVersion()) }

// Len implements Collection.
func (s *store[T]) Len() int { return s.lenAt(s.g.readVersion()) }

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

// put stores v under key and reports whether anything changed. An equal
// value is a no-op: the early cutoff.
func (s *store[T]) put(tx *Txn, key string, v T) bool {
	h, id, had := s.items.locate(key)
	var old T
	if had {
		if old = s.items.slot(id).val; s.acc.equal(old, v) {
			return false
		}
	}
	s.lockItems()
	id = s.items.setAt(key, h, id, had, v)
	s.noteChangeLocked(key, old, had, id, true)
	s.reindexUserLocked(id, old, had, v, true)
	s.unlockItems()
	s.reindexBuiltin(id, old, had, v, true)
	tx.touch(s.self())
	return true
}

// remove deletes key and reports whether it existed.
func (s *store[T]) remove(tx *Txn, key string) bool {
	id, had := s.items.find(key)
	if !had {
		return false
	}
	old := s.items.slot(id).val
	var zero T
	s.lockItems()
	s.noteChangeLocked(key, old, had, -1, false)
	s.reindexUserLocked(id, old, true, zero, false)
	s.items.deleteAt(id)
	s.unlockItems()
	s.reindexBuiltin(id, old, true, zero, false)
	tx.touch(s.self())
	return true
}

// lockItems takes mu for a change of the items, except while the
// constructing transaction fills the collection: no reader can reach it
// yet (see Graph.construct), and a lock per item would cost more than the
// item; nor while a load fills it, as readers then see it empty without
// reading the items (see load.go).
func (s *store[T]) lockItems() {
	if !s.unwatched && !s.loading {
		s.mu.Lock()
	}
}

func (s *store[T]) unlockItems() {
	if !s.unwatched && !s.loading {
		s.mu.Unlock()
	}
}

// noteChangeLocked records key's change to the item in slot (none when
// !hasCur): its value before the transaction, the first time the
// transaction changes it, and its slot now; and queues key for
// propagation.
func (s *store[T]) noteChangeLocked(key string, old T, had bool, slot int32, hasCur bool) {
	if s.unwatched || s.loading {
		return
	}
	if s.liveVersion == 0 {
		s.liveVersion = s.g.version.Load() + 1
	}
	i := s.changes.find(key)
	if i < 0 {
		i = s.changes.add(keyChange[T]{key: key, old: old, hadOld: had, slot: slot, hasCur: hasCur, round: s.round}, s.changeHint)
		s.unprop = append(s.unprop, i)
		return
	}
	c := &s.changes.list[i]
	c.slot, c.hasCur = slot, hasCur
	if c.round != s.round {
		c.round = s.round
		s.unprop = append(s.unprop, i)
	}
}

// current returns the value now of c's key, which the running
// transaction changed: the item in its slot, none if it was removed.
func (s *store[T]) current(c *keyChange[T]) (T, bool) {
	if !c.hasCur {
		var zero T
		return zero, false
	}
	return s.items.slot(c.slot).val, true
}

// self returns the node embedding s; set by each constructor.
func (s *store[T]) self() node { return s.g.nodes[s.id] }

// propagateChanges tells primary downstreams and fetching dependents about
// every key changed since the last call.
func (s *store[T]) propagateChanges(tx *Txn) {
	s.round++ // what changes from now on is queued anew
	if s.loading {
		s.propagateLoad(tx)
		return
	}
	for _, i := range s.unprop {
		c := &s.changes.list[i]
		for _, down := range s.downs {
			down.markDirty(tx, c.key)
		}
		cur, has := s.current(c)
		s.trigger(tx, c.key, c.old, c.hadOld, cur, has)
	}
	s.unprop = s.unprop[:0]
}

// finish implements node: it turns the transaction's changes into the
// batch deliver hands out. The changes stay for readers until retire.
func (s *store[T]) finish(version uint64) int {
	if s.unwatched {
		return s.finishUnwatched(version)
	}
	s.unprop = s.unprop[:0]
	if cap(s.unprop) > 1024 && !s.changes.inLargeRun() {
		s.unprop = nil // a bulk load's scratch space is not worth keeping
	}
	if s.loading {
		return s.finishLoad(version)
	}
	if s.changes.len() == 0 || version == 0 {
		return 0
	}
	events, recent, n := s.netEvents(s.changes.list)
	return s.publish(version, n, events, recent)
}

// publish counts a commit's n events, records recent in the history and
// queues events, sorted by key, for delivery; it returns n.
func (s *store[T]) publish(version uint64, n int, events []Event[T], recent []EventRecord) int {
	s.stats.events.Add(uint64(n))
	s.hist.events(version, s.g.commitClock, recent)
	s.g.recentScratch = clearedScratch(recent)
	if len(events) > 0 {
		sortEventsOn(events, s.g.workersFor(len(events)) > 1)
		s.outbox = Batch[T]{Version: version, Events: events}
	}
	return n
}

// finishUnwatched is finish for the transaction that constructed the
// collection: its items are its events, all adds, and no one is
// registered to receive them.
func (s *store[T]) finishUnwatched(version uint64) int {
	s.unwatched = false
	if version == 0 || s.items.len() == 0 {
		return 0
	}
	recent := make([]EventRecord, 0, min(s.items.len(), s.hist.size))
	for key := range s.items.keys() {
		if len(recent) == cap(recent) {
			break
		}
		recent = append(recent, EventRecord{Type: EventAdd.String(), Key: key})
	}
	n := s.items.len()
	s.stats.events.Add(uint64(n))
	s.hist.events(version, s.g.commitClock, recent)
	return n
}

// deliver implements node: it hands the batch finish made to every
// handler, after the commit is published.
func (s *store[T]) deliver() {
	if s.outbox.Events == nil {
		return
	}
	for _, h := range s.handlers {
		h.enqueue(s.outbox)
	}
	s.outbox = Batch[T]{}
}

// netEvents turns the transaction's changes into the events handlers get
// (none when no handler is registered), the records the history keeps, and
// the number of keys whose value changed.
func (s *store[T]) netEvents(changes []keyChange[T]) (events []Event[T], recent []EventRecord, n int) {
	want := len(s.handlers) > 0
	// vals holds what the events point to: one allocation, not one per
	// value. (A handler that keeps one pointer keeps the whole array.)
	var vals []T
	if want {
		events, vals = makeEvents[T](len(changes))
	}
	recent = s.g.recentScratch[:0]
	for i := range changes {
		pc := &changes[i]
		key := pc.key
		nv, hasNew := s.current(pc)
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
	h.inline.Store(o.inline)
	// Under deliverMu no commit is between making its batches and handing
	// them out, so the replay and the batches after it join up exactly.
	s.g.deliverMu.Lock()
	if s.stopped {
		s.g.deliverMu.Unlock()
		panic(fmt.Sprintf("krt: Register on %q, whose sub-graph has stopped", s.name))
	}
	if o.replay {
		h.queue = append(h.queue, s.replay(s.g.version.Load()))
		h.pendingReplay = true
	}
	s.handlers = append(s.handlers, h)
	s.stats.handlers.Store(int32(len(s.handlers)))
	s.g.deliverMu.Unlock()
	s.g.addHandler(h)
	return h.reg
}

// replay returns the items at version v as a batch of adds.
func (s *store[T]) replay(v uint64) Batch[T] {
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys := s.keysAtLocked(v)
	sort.Strings(keys)
	events := make([]Event[T], 0, len(keys))
	for _, k := range keys {
		item, _ := s.valueAtLocked(v, k)
		events = append(events, Event[T]{Type: EventAdd, Key: k, New: &item})
	}
	return Batch[T]{Version: v, Events: events}
}

func (s *store[T]) unregister(h *handler[T]) {
	s.g.deliverMu.Lock()
	s.handlers = slices.DeleteFunc(s.handlers, func(x *handler[T]) bool { return x == h })
	s.stats.handlers.Store(int32(len(s.handlers)))
	s.g.deliverMu.Unlock()
	s.g.removeHandler(h)
}

func (s *store[T]) sortedKeys() []string {
	return slices.Sorted(s.items.keys())
}

// setID numbers s, which the graph holds at g.nodes[id] by then.
func (s *store[T]) setID(id int) {
	s.id = id
	s.deps.owner = s.g.nodes[id].(upstream)
}

// undo implements node; only static collections have writes to revert.
func (s *store[T]) undo() {}
