package krt

import "slices"

// smallSet is one bucket of a reverse index: the reads filed under one
// bucket (recSet); keySet, a bucket of an index, builds on it. Most buckets hold a few elements (a selector pair names one
// service, a service selects a few pods), kept in a slice, which costs a
// fraction of a map and is faster to scan; a bucket that grows past
// fewElems moves to a map, so that removing one element of many stays
// O(1). The zero value is an empty set; so is a nil *smallSet for len,
// has, each and appendTo.
type smallSet[E comparable] struct {
	few  []E
	many map[E]struct{}
}

type recSet = smallSet[*fetchRec]

const fewElems = 16

func (s *smallSet[E]) len() int {
	switch {
	case s == nil:
		return 0
	case s.many != nil:
		return len(s.many)
	}
	return len(s.few)
}

// has reports whether e is in the set.
func (s *smallSet[E]) has(e E) bool {
	switch {
	case s == nil:
		return false
	case s.many != nil:
		_, ok := s.many[e]
		return ok
	}
	return slices.Contains(s.few, e)
}

// add adds e and reports whether it was not in the set yet.
func (s *smallSet[E]) add(e E) bool {
	if s.many != nil {
		if _, ok := s.many[e]; ok {
			return false
		}
		s.many[e] = struct{}{}
		return true
	}
	if slices.Contains(s.few, e) {
		return false
	}
	if len(s.few) < fewElems {
		s.few = append(s.few, e)
		return true
	}
	s.many = make(map[E]struct{}, 2*fewElems)
	for _, x := range s.few {
		s.many[x] = struct{}{}
	}
	s.few = nil
	s.many[e] = struct{}{}
	return true
}

// remove removes e and reports whether it was in the set.
func (s *smallSet[E]) remove(e E) bool {
	if s.many != nil {
		if _, ok := s.many[e]; !ok {
			return false
		}
		delete(s.many, e)
		return true
	}
	i := slices.Index(s.few, e)
	if i < 0 {
		return false
	}
	last := len(s.few) - 1
	s.few[i] = s.few[last]
	var zero E
	s.few[last] = zero
	s.few = s.few[:last]
	return true
}

// any returns one element of a non-empty set.
func (s *smallSet[E]) any() E {
	for e := range s.many {
		return e
	}
	return s.few[0]
}

// each calls fn with every element, unordered. fn must not change the set.
func (s *smallSet[E]) each(fn func(E)) {
	if s == nil {
		return
	}
	for _, e := range s.few {
		fn(e)
	}
	for e := range s.many {
		fn(e)
	}
}

// appendTo appends the elements, unordered, to out.
func (s *smallSet[E]) appendTo(out []E) []E {
	if s == nil {
		return out
	}
	out = slices.Grow(out, s.len())
	out = append(out, s.few...)
	for e := range s.many {
		out = append(out, e)
	}
	return out
}

// keySet is one bucket of an index: the item keys filed under one index
// key. Its slice is kept sorted, so that a query reading one bucket gets
// the keys in order without sorting them (see sorted); inserting into a
// slice of at most fewElems costs less than the sort it saves. Like a
// smallSet, a nil *keySet is empty for len, has and appendTo.
type keySet struct{ set smallSet[string] }

func (s *keySet) len() int {
	if s == nil {
		return 0
	}
	return s.set.len()
}

// has reports whether key is in the set.
func (s *keySet) has(key string) bool {
	switch {
	case s == nil:
		return false
	case s.set.many != nil:
		return s.set.has(key)
	}
	_, found := slices.BinarySearch(s.set.few, key)
	return found
}

// add adds key and reports whether it was not in the set yet.
func (s *keySet) add(key string) bool {
	if s.set.many != nil || len(s.set.few) >= fewElems {
		return s.set.add(key)
	}
	i, found := slices.BinarySearch(s.set.few, key)
	if found {
		return false
	}
	s.set.few = slices.Insert(s.set.few, i, key)
	return true
}

// remove removes key and reports whether it was in the set.
func (s *keySet) remove(key string) bool {
	if s.set.many != nil {
		return s.set.remove(key)
	}
	i, found := slices.BinarySearch(s.set.few, key)
	if !found {
		return false
	}
	s.set.few = slices.Delete(s.set.few, i, i+1)
	return true
}

// sorted reports whether appendTo lists the keys in order: while they are
// few enough to be kept in the slice.
func (s *keySet) sorted() bool { return s == nil || s.set.many == nil }

// appendTo appends the keys to out, in order when sorted reports so.
func (s *keySet) appendTo(out []string) []string {
	if s == nil {
		return out
	}
	return s.set.appendTo(out)
}
