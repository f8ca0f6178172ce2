package xds

import (
	"slices"
	"strings"
)

// sortedSet is a set of values, one per name, that a stream keeps per
// type — the names it subscribes to (nameSet), the resources it holds
// (heldSet) — in a slice sorted by name: a pointer or string header per
// name, where a map costs several times that, and a hundred wildcard
// streams of 4,000 names each keep 400,000 entries.
//
// Adding names in order appends them; any other change goes to overlay,
// a small map of the names added out of order and tombstones of those
// removed, which is merged into the slice once it grows past a quarter
// of it. So every operation costs a binary search and a map lookup,
// amortized, whatever the order, and a client adding 50,000 names among
// 100,000 costs one merge, not 50,000 copies.
//
// The zero value is empty. A sortedSet is not safe for concurrent use:
// even all changes it.
type sortedSet[V any, K namer[V]] struct {
	sorted []V
	// overlay holds, per name, a value added out of order (ok set) or,
	// for a name of sorted, a tombstone (ok clear).
	overlay map[string]overlaid[V]
	n       int
	// shared marks sorted as another's too (fill): read only, copied
	// before the first change to it. A hundred wildcard streams hold the
	// same first response and the same requested names; sharing them
	// saves a slice of every type for each.
	shared bool
}

// namer gives the name of a value.
type namer[V any] interface{ key(V) string }

type overlaid[V any] struct {
	v  V
	ok bool
}

// heldSet is the resources a stream's type holds, by name.
type heldSet = sortedSet[*resource, resourceName]

// nameSet is the names a stream's type subscribes to.
type nameSet = sortedSet[string, plainName]

type resourceName struct{}

func (resourceName) key(r *resource) string { return r.name }

type plainName struct{}

func (plainName) key(n string) string { return n }

// search returns where name is in sorted, or would be inserted.
func (s *sortedSet[V, K]) search(name string) (int, bool) {
	var k K
	n := len(s.sorted)
	if n == 0 {
		return 0, false
	}
	// The common cases of names added in order, and of the name just
	// added looked up again.
	switch c := strings.Compare(k.key(s.sorted[n-1]), name); {
	case c < 0:
		return n, false
	case c == 0:
		return n - 1, true
	}
	// The two kinds searched directly: comparing through K costs a call
	// per step, and wants searches names on every name of a response.
	switch sorted := any(s.sorted).(type) {
	case []string:
		return slices.BinarySearch(sorted, name)
	case []*resource:
		return slices.BinarySearchFunc(sorted, name, compareName)
	}
	return slices.BinarySearchFunc(s.sorted, name, func(v V, name string) int {
		return strings.Compare(k.key(v), name)
	})
}

func compareName(r *resource, name string) int { return strings.Compare(r.name, name) }

// get returns the value for name.
func (s *sortedSet[V, K]) get(name string) (V, bool) {
	if o, in := s.overlay[name]; in {
		return o.v, o.ok
	}
	if i, ok := s.search(name); ok {
		return s.sorted[i], true
	}
	var zero V
	return zero, false
}

// has reports whether s has a value for name.
func (s *sortedSet[V, K]) has(name string) bool {
	_, ok := s.get(name)
	return ok
}

// put sets the value of v's name to v and returns the value it replaces.
func (s *sortedSet[V, K]) put(v V) (old V, had bool) {
	var k K
	name := k.key(v)
	o, over := s.overlay[name]
	i, found := s.search(name)
	if found || (i == len(s.sorted) && !over && len(s.overlay) == 0) {
		s.own(0)
	}
	switch {
	case found && over: // a tombstone
		s.sorted[i] = v
		delete(s.overlay, name)
	case found:
		old, had = s.sorted[i], true
		s.sorted[i] = v
	case over:
		old, had = o.v, true
		s.overlay[name] = overlaid[V]{v: v, ok: true}
	case i == len(s.sorted) && len(s.overlay) == 0:
		s.sorted = append(s.sorted, v)
	default:
		s.setOverlay(name, overlaid[V]{v: v, ok: true})
	}
	if !had {
		s.n++
	}
	return old, had
}

// remove forgets name and returns its value.
func (s *sortedSet[V, K]) remove(name string) (old V, had bool) {
	if o, over := s.overlay[name]; over {
		if o.ok {
			delete(s.overlay, name)
			s.n--
		}
		return o.v, o.ok
	}
	i, found := s.search(name)
	if !found {
		return old, false
	}
	old = s.sorted[i]
	s.n--
	if i == len(s.sorted)-1 {
		s.own(0)
		s.sorted = slices.Delete(s.sorted, i, i+1)
	} else {
		s.setOverlay(name, overlaid[V]{})
	}
	return old, true
}

// setOverlay records o for name in overlay, merging overlay into sorted
// once it has grown past a quarter of it.
func (s *sortedSet[V, K]) setOverlay(name string, o overlaid[V]) {
	if s.overlay == nil {
		s.overlay = map[string]overlaid[V]{}
	}
	s.overlay[name] = o
	if len(s.overlay) > len(s.sorted)/4+64 {
		s.merge()
	}
}

// merge folds overlay into sorted.
func (s *sortedSet[V, K]) merge() {
	var k K
	added := make([]V, 0, len(s.overlay))
	for _, o := range s.overlay {
		if o.ok {
			added = append(added, o.v)
		}
	}
	cmp := func(a, b V) int { return strings.Compare(k.key(a), k.key(b)) }
	slices.SortFunc(added, cmp)
	out := make([]V, 0, s.n)
	i := 0
	for _, v := range s.sorted {
		if o, in := s.overlay[k.key(v)]; in && !o.ok {
			continue // removed
		}
		for ; i < len(added) && cmp(added[i], v) < 0; i++ {
			out = append(out, added[i])
		}
		out = append(out, v)
	}
	s.sorted, s.overlay, s.shared = append(out, added[i:]...), nil, false
}

// own makes sorted s's own, with room for n more, before it is changed
// in place.
func (s *sortedSet[V, K]) own(n int) {
	if s.shared {
		s.sorted = append(make([]V, 0, len(s.sorted)+n), s.sorted...)
		s.shared = false
	}
}

// fill makes the empty s hold the values of sorted, which are ordered by
// name, each name once. s shares sorted, read only, until it changes:
// the caller must not change sorted either.
func (s *sortedSet[V, K]) fill(sorted []V) {
	s.sorted, s.overlay, s.n, s.shared = sorted, nil, len(sorted), len(sorted) > 0
}

// share replaces the values of s, merged, by those intern returns for
// them (equal, ordered by name), and shares that slice from now on. A
// slice shared already (fill) is offered too: it may be a list no other
// set holds, decoded for this one.
func (s *sortedSet[V, K]) share(intern func([]V) []V) {
	if all := s.all(); len(all) > 0 {
		s.sorted, s.shared = intern(all), true
	}
}

// len returns the number of names in s.
func (s *sortedSet[V, K]) len() int { return s.n }

// grow makes room for n more names added in order.
func (s *sortedSet[V, K]) grow(n int) {
	if s.shared {
		s.own(n)
		return
	}
	s.sorted = slices.Grow(s.sorted, n)
}

// all returns the values, ordered by name. The slice is the set's own:
// read only, and valid until the set changes.
func (s *sortedSet[V, K]) all() []V {
	if len(s.overlay) > 0 {
		s.merge()
	}
	return s.sorted
}

// names returns the names in s, in order, as a copy: the caller may
// change the set while it walks them.
func (s *sortedSet[V, K]) names() []string {
	var k K
	all := s.all()
	out := make([]string, len(all))
	for i, v := range all {
		out[i] = k.key(v)
	}
	return out
}
