package krt

import (
	"slices"
	"strings"
)

// smallSet is one bucket of a reverse index: the reads filed under one
// bucket (recSet); keySet, a bucket of an index, builds on it. Most
// buckets hold a few elements (a selector pair names one service, a
// service selects a few pods), kept in a slice, which costs a fraction of
// a hash set and is faster to scan; a bucket that grows past fewElems
// moves to a hashSet, so that removing one element of many stays O(1). The zero value is an empty set; so is a nil *smallSet for len,
// has, each and appendTo.
type smallSet[E comparable] struct {
	few  []E
	many *hashSet[E]
}

type recSet = smallSet[*fetchRec]

const fewElems = 16

func (s *smallSet[E]) len() int {
	switch {
	case s == nil:
		return 0
	case s.many != nil:
		return s.many.n
	}
	return len(s.few)
}

// has reports whether e is in the set.
func (s *smallSet[E]) has(e E) bool {
	switch {
	case s == nil:
		return false
	case s.many != nil:
		return s.many.has(e)
	}
	return slices.Contains(s.few, e)
}

// add adds e and reports whether it was not in the set yet.
func (s *smallSet[E]) add(e E) bool {
	if s.many != nil {
		return s.many.add(e)
	}
	if slices.Contains(s.few, e) {
		return false
	}
	if len(s.few) < fewElems {
		s.few = append(roomForOne(s.few), e)
		return true
	}
	s.many = &hashSet[E]{}
	for _, x := range s.few {
		s.many.add(x)
	}
	s.few = nil
	s.many.add(e)
	return true
}

// remove removes e and reports whether it was in the set.
func (s *smallSet[E]) remove(e E) bool {
	if s.many != nil {
		return s.many.remove(e)
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
	if s.many != nil {
		for e := range s.many.all {
			return e
		}
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
	if s.many != nil {
		for e := range s.many.all {
			fn(e)
		}
	}
}

// appendTo appends the elements, unordered, to out.
func (s *smallSet[E]) appendTo(out []E) []E {
	if s == nil {
		return out
	}
	out = slices.Grow(out, s.len())
	out = append(out, s.few...)
	if s.many != nil {
		for e := range s.many.all {
			out = append(out, e)
		}
	}
	return out
}

// roomForOne returns few, or a copy of it with room for one more element
// when it is full. It grows by half rather than append's double: a
// graph holds its buckets by the thousand, most of a few elements (ten
// pods to a service), and a doubled bucket is a third empty on average.
func roomForOne[E any](few []E) []E {
	if len(few) < cap(few) {
		return few
	}
	return append(make([]E, 0, len(few)+len(few)/2+1), few...)
}

// keySet is one bucket of an index: the slots (see itemTable) of the
// items filed under one index key. Its slice is kept ordered by the
// items' keys, so that a query reading one bucket gets them in order
// without sorting (see sorted); inserting into a slice of at most
// fewElems costs less than the sort it saves. A slot number is a quarter
// of a key's size and holds no pointer for the collector to follow. Like
// a smallSet, a nil *keySet is empty for len, has and appendTo. The
// methods that order take the table the slots are of.
type keySet struct{ set smallSet[int32] }

func (s *keySet) len() int {
	if s == nil {
		return 0
	}
	return s.set.len()
}

// has reports whether slot id is in the set.
func (s *keySet) has(id int32) bool {
	if s == nil {
		return false
	}
	return s.set.has(id)
}

// searchSlot returns where id's key is, or would be, in few, ordered by
// the keys of t's slots.
func searchSlot[T any](few []int32, t *itemTable[T], id int32) (int, bool) {
	key := t.keyOf(id)
	return slices.BinarySearchFunc(few, key, func(x int32, k string) int { return strings.Compare(t.keyOf(x), k) })
}

// addSlot adds slot id of t to s and reports whether it was not in the set yet.
func addSlot[T any](s *keySet, t *itemTable[T], id int32) bool {
	if s.set.many != nil || len(s.set.few) >= fewElems {
		return s.set.add(id)
	}
	i, found := searchSlot(s.set.few, t, id)
	if found {
		return false
	}
	s.set.few = slices.Insert(roomForOne(s.set.few), i, id)
	return true
}

// remove removes slot id and reports whether it was in the set.
func (s *keySet) remove(id int32) bool {
	if s.set.many != nil {
		return s.set.remove(id)
	}
	i := slices.Index(s.set.few, id)
	if i < 0 {
		return false
	}
	s.set.few = slices.Delete(s.set.few, i, i+1)
	return true
}

// sorted reports whether appendTo lists the slots in their keys' order:
// while they are few enough to be kept in the slice.
func (s *keySet) sorted() bool { return s == nil || s.set.many == nil }

// appendTo appends the slots to out, in order when sorted reports so.
func (s *keySet) appendTo(out []int32) []int32 {
	if s == nil {
		return out
	}
	return s.set.appendTo(out)
}
