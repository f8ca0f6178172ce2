package xds

import "math/bits"

// slotSet is a set of stream slots (see subscribers), one bit each.
// The zero value is empty; each on a nil set does nothing.
type slotSet struct {
	words []uint64
	// n is the number of slots in the set.
	n int
}

// add puts slot in s.
func (s *slotSet) add(slot int) {
	w, bit := slot/64, uint64(1)<<(slot%64)
	if w >= len(s.words) {
		s.words = append(s.words, make([]uint64, w+1-len(s.words))...)
	}
	if s.words[w]&bit == 0 {
		s.words[w] |= bit
		s.n++
	}
}

// remove takes slot out of s.
func (s *slotSet) remove(slot int) {
	w, bit := slot/64, uint64(1)<<(slot%64)
	if w < len(s.words) && s.words[w]&bit != 0 {
		s.words[w] &^= bit
		s.n--
	}
}

// each calls f with every slot in s, in increasing order.
func (s *slotSet) each(f func(slot int)) {
	if s == nil {
		return
	}
	for w, word := range s.words {
		for word != 0 {
			f(w*64 + bits.TrailingZeros64(word))
			word &= word - 1
		}
	}
}
