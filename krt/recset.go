package krt

import "slices"

// recSet is one bucket of a reverse index: the reads filed under it. Most
// buckets hold a few reads, kept in a slice, which costs a fraction of a
// map and is faster to scan; a bucket that grows past fewReads moves to a
// map, so that unfiling one read of many stays O(1).
type recSet struct {
	few  []*fetchRec
	many map[*fetchRec]struct{}
}

const fewReads = 16

func (s *recSet) len() int {
	switch {
	case s == nil:
		return 0
	case s.many != nil:
		return len(s.many)
	}
	return len(s.few)
}

// add files rec and reports whether it was not filed yet.
func (s *recSet) add(rec *fetchRec) bool {
	if s.many != nil {
		if _, ok := s.many[rec]; ok {
			return false
		}
		s.many[rec] = struct{}{}
		return true
	}
	if slices.Contains(s.few, rec) {
		return false
	}
	if len(s.few) < fewReads {
		s.few = append(s.few, rec)
		return true
	}
	s.many = make(map[*fetchRec]struct{}, 2*fewReads)
	for _, r := range s.few {
		s.many[r] = struct{}{}
	}
	s.few = nil
	s.many[rec] = struct{}{}
	return true
}

// remove unfiles rec and reports whether it was filed.
func (s *recSet) remove(rec *fetchRec) bool {
	if s.many != nil {
		if _, ok := s.many[rec]; !ok {
			return false
		}
		delete(s.many, rec)
		return true
	}
	i := slices.Index(s.few, rec)
	if i < 0 {
		return false
	}
	last := len(s.few) - 1
	s.few[i] = s.few[last]
	s.few[last] = nil
	s.few = s.few[:last]
	return true
}

// any returns one read of a non-empty set.
func (s *recSet) any() *fetchRec {
	for r := range s.many {
		return r
	}
	return s.few[0]
}

// each calls fn with every read in the set (none for a nil set). fn must
// not file or unfile reads.
func (s *recSet) each(fn func(*fetchRec)) {
	if s == nil {
		return
	}
	for _, r := range s.few {
		fn(r)
	}
	for r := range s.many {
		fn(r)
	}
}
