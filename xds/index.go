package xds

import "sync"

// subscribers is the server's index of which streams a changed name
// reaches: per type, the streams subscribed to the whole type
// (wildcard), and per name the other streams that subscribe to it or
// hold it. A round of pushes asks it for the streams a change reaches
// (route) instead of asking every stream, so a change of one load
// assignment wakes its few subscribers, not ten thousand streams.
//
// A stream's session reports what it starts or stops being interested
// in (session.takeInterest) and its I/O code applies that here (apply)
// while it still holds the cache's read lock, so a change applied to the
// cache after a subscription is routed by the index that holds it. A
// wildcard stream has no entries by name: a name it also names is
// routed to it as a wildcard.
//
// Each stream has a slot, a small number reused once the stream is
// removed, and a name's streams are a bitset of slots: 100 streams that
// all name a load assignment cost it two words, not a map of 100 keys.
//
// K is what stands for a stream: *conn in the server, a script's stream
// in the protocol tests. Its methods are safe for concurrent use; mu is
// a leaf of the lock order (see cache).
type subscribers[K comparable] struct {
	mu    sync.Mutex // guards following
	types map[string]*typeSubscribers[K]
	// slots numbers the streams indexed; keys is its inverse (the zero
	// K in a free slot) and free the slots to reuse.
	slots map[K]int
	keys  []K
	free  []int
	// demands feed, per type, the names streams start and stop being
	// interested in (WithDemand).
	demands map[string]*Demand
}

// typeSubscribers is the index of one type.
type typeSubscribers[K comparable] struct {
	wildcard map[K]struct{}
	byName   map[string]*slotSet
	// demand, when set, is told of the first stream indexed by a name
	// and of the last one leaving it.
	demand *Demand
}

// interestOp is one change of what a stream's type routes to it: a name
// it now subscribes to or holds (on) or no longer does, or, with
// wildcard set, the type as a whole.
type interestOp struct {
	name     string
	wildcard bool
	on       bool
}

// interest is the interest changes of one type of a stream, in order.
type interest struct {
	typeURL string
	ops     []interestOp
}

func newSubscribers[K comparable]() *subscribers[K] {
	return &subscribers[K]{types: map[string]*typeSubscribers[K]{}, slots: map[K]int{}, demands: map[string]*Demand{}}
}

// typeLocked returns the index of typeURL, creating it. x.mu must be
// held.
func (x *subscribers[K]) typeLocked(typeURL string) *typeSubscribers[K] {
	t := x.types[typeURL]
	if t == nil {
		t = &typeSubscribers[K]{wildcard: map[K]struct{}{}, byName: map[string]*slotSet{}, demand: x.demands[typeURL]}
		x.types[typeURL] = t
	}
	return t
}

// slotLocked returns k's slot, giving it one. x.mu must be held.
func (x *subscribers[K]) slotLocked(k K) int {
	if i, ok := x.slots[k]; ok {
		return i
	}
	i := len(x.keys)
	if n := len(x.free); n > 0 {
		i, x.free = x.free[n-1], x.free[:n-1]
		x.keys[i] = k
	} else {
		x.keys = append(x.keys, k)
	}
	x.slots[k] = i
	return i
}

// apply records k's interest changes, in order.
func (x *subscribers[K]) apply(k K, changes []interest) {
	if len(changes) == 0 {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.applyLocked(k, changes)
}

func (x *subscribers[K]) applyLocked(k K, changes []interest) {
	slot := -1
	for _, c := range changes {
		t := x.typeLocked(c.typeURL)
		for _, op := range c.ops {
			if !op.wildcard && slot < 0 {
				slot = x.slotLocked(k)
			}
			t.applyLocked(k, slot, op)
		}
	}
}

func (t *typeSubscribers[K]) applyLocked(k K, slot int, op interestOp) {
	switch {
	case op.wildcard && op.on:
		t.wildcard[k] = struct{}{}
	case op.wildcard:
		delete(t.wildcard, k)
	case op.on:
		set := t.byName[op.name]
		if set == nil {
			set = &slotSet{}
			t.byName[op.name] = set
			if t.demand != nil {
				t.demand.note(op.name, true)
			}
		}
		set.add(slot)
	default:
		if set := t.byName[op.name]; set != nil {
			set.remove(slot)
			if set.n == 0 {
				delete(t.byName, op.name)
				if t.demand != nil {
					t.demand.note(op.name, false)
				}
			}
		}
	}
}

// remove forgets k, a stream that ended, whose session s holds what the
// index holds of it.
func (x *subscribers[K]) remove(k K, s *session) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.applyLocked(k, s.interestNow(false))
	if i, ok := x.slots[k]; ok {
		var zero K
		delete(x.slots, k)
		x.keys[i] = zero
		x.free = append(x.free, i)
	}
}

// routing is what one round's walk of the index found (routeInto): per
// stream a change reaches, the changed names it subscribes to or holds;
// and how many of the changed names reach some stream. Its maps are kept
// from round to round (reset): a round under churn routes a name or two
// to a few streams, and fresh maps for each were most of what a round
// allocated. It holds at most the maps of the largest round.
type routing[K comparable] struct {
	streams map[K]map[string]map[string]struct{}
	reached int
	// owned are the name sets the walk made (a wildcard's set is the
	// round's own, shared); spareSets and spareTypes are cleared maps
	// for the next round.
	owned      []map[string]struct{}
	spareSets  []map[string]struct{}
	spareTypes []map[string]map[string]struct{}
}

// reset empties r for the next round, keeping its maps. The maps handed
// out before are cleared: no stream may keep them.
func (r *routing[K]) reset() {
	for _, m := range r.streams {
		clear(m)
		r.spareTypes = append(r.spareTypes, m)
	}
	clear(r.streams)
	for _, set := range r.owned {
		clear(set)
		r.spareSets = append(r.spareSets, set)
	}
	clear(r.owned)
	r.owned, r.reached = r.owned[:0], 0
}

// to returns k's changed names per type, creating them.
func (r *routing[K]) to(k K) map[string]map[string]struct{} {
	m := r.streams[k]
	if m == nil {
		if n := len(r.spareTypes); n > 0 {
			m, r.spareTypes = r.spareTypes[n-1], r.spareTypes[:n-1]
		} else {
			m = map[string]map[string]struct{}{}
		}
		r.streams[k] = m
	}
	return m
}

// set returns a name set of r's own.
func (r *routing[K]) set() map[string]struct{} {
	var set map[string]struct{}
	if n := len(r.spareSets); n > 0 {
		set, r.spareSets = r.spareSets[n-1], r.spareSets[:n-1]
	} else {
		set = map[string]struct{}{}
	}
	r.owned = append(r.owned, set)
	return set
}

// routeInto walks the index once for the names in changed (per type),
// under its lock, and fills the empty r: for every stream a change
// reaches, the changed names it subscribes to or holds — the whole
// changed set of a type it subscribes to by wildcard (shared, not
// copied), the names it is indexed by otherwise — and how many of the
// names reach some stream (see reaching). The sets in r are read only.
func (x *subscribers[K]) routeInto(changed map[string]map[string]struct{}, r *routing[K]) {
	if r.streams == nil {
		r.streams = map[K]map[string]map[string]struct{}{}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for typeURL, names := range changed {
		t := x.types[typeURL]
		if t == nil {
			continue
		}
		for k := range t.wildcard {
			r.to(k)[typeURL] = names
		}
		if len(t.wildcard) > 0 {
			r.reached += len(names)
		}
		for n := range names {
			slots := t.byName[n]
			if slots != nil && slots.n > 0 && len(t.wildcard) == 0 {
				r.reached++
			}
			slots.each(func(slot int) {
				k := x.keys[slot]
				if _, all := t.wildcard[k]; all {
					return // routed the whole set above
				}
				m := r.to(k)
				if m[typeURL] == nil {
					m[typeURL] = r.set()
				}
				m[typeURL][n] = struct{}{}
			})
		}
	}
}
