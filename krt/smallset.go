package krt

import "slices"

// smallSet is one bucket of an index: the item keys filed under one index
// key (keySet), or the reads filed under one bucket of a reverse index
// (recSet). Most buckets hold a few elements (a selector pair names one
// service, a service selects a few pods), kept in a slice, which costs a
// fraction of a map and is faster to scan; a bucket that grows past
// fewElems moves to a map, so that removing one element of many stays
// O(1). The zero value is an empty set; so is a nil *smallSet for len,
// has, each and appendTo.
type smallSet[E comparable] struct {
	few  []E
	many map[E]struct{}
}

type (
	keySet = smallSet[string]
	recSet = smallSet[*fetchRec]
)

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
