package krt

import (
	"hash/maphash"
	"math/bits"
)

// hashSet is the large form of a smallSet: its elements in one
// open-addressing array, probed linearly, with a bit per position saying
// which hold one. A Go map[E]struct{} of pointers keeps a control byte
// per slot and splits its tables at seven eighths full, in pieces that
// average well under that; this keeps the element alone, in an array at
// most four fifths full. The zero value is an empty set.
type hashSet[E comparable] struct {
	elems []E      // a power of two long, or nil
	used  []uint64 // a bit per position of elems
	n     int
}

func (h *hashSet[E]) home(e E) int {
	return int(maphash.Comparable(keySeed, e)) & (len(h.elems) - 1)
}

func (h *hashSet[E]) isUsed(i int) bool { return h.used[i/64]&(1<<(i%64)) != 0 }

// find returns e's position, or that of the free one ending its probe.
func (h *hashSet[E]) find(e E) (int, bool) {
	mask := len(h.elems) - 1
	for i := h.home(e); ; i = (i + 1) & mask {
		if !h.isUsed(i) {
			return i, false
		}
		if h.elems[i] == e {
			return i, true
		}
	}
}

func (h *hashSet[E]) has(e E) bool {
	if h.n == 0 {
		return false
	}
	_, ok := h.find(e)
	return ok
}

// add adds e and reports whether it was not in the set yet.
func (h *hashSet[E]) add(e E) bool {
	if (h.n+1)*5 > len(h.elems)*4 {
		h.grow()
	}
	i, ok := h.find(e)
	if ok {
		return false
	}
	h.elems[i] = e
	h.used[i/64] |= 1 << (i % 64)
	h.n++
	return true
}

func (h *hashSet[E]) grow() {
	old, oldUsed := h.elems, h.used
	size := max(64, 2*len(old))
	h.elems, h.used = make([]E, size), make([]uint64, size/64)
	touchFrom(h.elems, 0)
	for w, word := range oldUsed {
		for ; word != 0; word &= word - 1 {
			e := old[w*64+bits.TrailingZeros64(word)]
			i, _ := h.find(e)
			h.elems[i] = e
			h.used[i/64] |= 1 << (i % 64)
		}
	}
}

// remove removes e and reports whether it was in the set. The elements
// after it that a probe could no longer reach across the gap move back.
func (h *hashSet[E]) remove(e E) bool {
	if h.n == 0 {
		return false
	}
	i, ok := h.find(e)
	if !ok {
		return false
	}
	mask := len(h.elems) - 1
	for j := (i + 1) & mask; h.isUsed(j); j = (j + 1) & mask {
		if staysPast(i, j, h.home(h.elems[j])) {
			continue
		}
		h.elems[i] = h.elems[j]
		i = j
	}
	var zero E
	h.elems[i] = zero
	h.used[i/64] &^= 1 << (i % 64)
	h.n--
	return true
}

// all yields every element, unordered. The set must not change meanwhile.
func (h *hashSet[E]) all(yield func(E) bool) {
	for w, word := range h.used {
		for ; word != 0; word &= word - 1 {
			if !yield(h.elems[w*64+bits.TrailingZeros64(word)]) {
				return
			}
		}
	}
}

// staysPast reports whether the entry at j of an array probed linearly,
// whose probe starts at home, can stay when position gap empties: its home
// is cyclically in (gap, j], so its probe does not cross the gap.
func staysPast(gap, j, home int) bool {
	if gap <= j {
		return gap < home && home <= j
	}
	return gap < home || home <= j
}
