package krt

import "slices"

// keySet is one entry of an index: the keys of the items filed under one
// index key. Most entries hold a few keys (a selector pair names one
// service, a service selects a few pods), kept in a slice, which costs a
// fraction of a map and is faster to scan; an entry that grows past
// fewKeys moves to a map, so that unfiling one key of many stays O(1).
type keySet struct {
	few  []string
	many map[string]struct{}
}

const fewKeys = 16

func (s *keySet) len() int {
	switch {
	case s == nil:
		return 0
	case s.many != nil:
		return len(s.many)
	}
	return len(s.few)
}

// has reports whether key is filed (false for a nil set).
func (s *keySet) has(key string) bool {
	switch {
	case s == nil:
		return false
	case s.many != nil:
		_, ok := s.many[key]
		return ok
	}
	return slices.Contains(s.few, key)
}

// add files key and reports whether it was not filed yet.
func (s *keySet) add(key string) bool {
	if s.many != nil {
		if _, ok := s.many[key]; ok {
			return false
		}
		s.many[key] = struct{}{}
		return true
	}
	if slices.Contains(s.few, key) {
		return false
	}
	if len(s.few) < fewKeys {
		s.few = append(s.few, key)
		return true
	}
	s.many = make(map[string]struct{}, 2*fewKeys)
	for _, k := range s.few {
		s.many[k] = struct{}{}
	}
	s.few = nil
	s.many[key] = struct{}{}
	return true
}

// remove unfiles key and reports whether it was filed.
func (s *keySet) remove(key string) bool {
	if s.many != nil {
		if _, ok := s.many[key]; !ok {
			return false
		}
		delete(s.many, key)
		return true
	}
	i := slices.Index(s.few, key)
	if i < 0 {
		return false
	}
	last := len(s.few) - 1
	s.few[i] = s.few[last]
	s.few[last] = ""
	s.few = s.few[:last]
	return true
}

// appendTo appends the set's keys, unordered, to keys (none for a nil set).
func (s *keySet) appendTo(keys []string) []string {
	if s == nil {
		return keys
	}
	keys = slices.Grow(keys, s.len())
	keys = append(keys, s.few...)
	for k := range s.many {
		keys = append(keys, k)
	}
	return keys
}
