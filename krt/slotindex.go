package krt

// slotIndex finds a key's slot in an array of slots (see itemTable and
// inputTable): an open-addressing hash table probed linearly, a power of
// two long, each entry 0 when empty, else the key's hash<<32 | slot+1.
// The tables probe it themselves, as they alone know where a slot's key
// is; growing and emptying an entry need only the hashes it holds.
type slotIndex []uint64

// grow returns x, or x rehashed into a larger index, so that it holds n
// entries at most four in five of it used and a probe ends soon.
func (x slotIndex) grow(n int) slotIndex {
	if n*5 <= len(x)*4 {
		return x
	}
	size := 8
	for n*5 > size*4 {
		size *= 2
	}
	grown := make(slotIndex, size)
	mask := uint32(size - 1)
	for _, e := range x {
		if e == 0 {
			continue
		}
		pos := uint32(e>>32) & mask
		for grown[pos] != 0 {
			pos = (pos + 1) & mask
		}
		grown[pos] = e
	}
	return grown
}

// unindex empties the entry at pos, moving back the entries after it
// that a probe could no longer reach across the gap.
func (x slotIndex) unindex(pos uint32) {
	mask := uint32(len(x) - 1)
	i := pos
	for j := (i + 1) & mask; x[j] != 0; j = (j + 1) & mask {
		if staysPast(int(i), int(j), int(uint32(x[j]>>32)&mask)) {
			continue
		}
		x[i] = x[j]
		i = j
	}
	x[i] = 0
}
