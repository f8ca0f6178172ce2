package krt

// slotIndex finds a key's slot in an array of slots (see itemTable and
// inputTable): an open-addressing hash table probed linearly, a power of
// two long, each entry 0 when empty, else slot+1 in the bits of the
// index's mask and the key's hash in the bits above them. The probe
// starts where the hash's low bits say, so the entry need not keep them:
// an entry is half a word, the hash's other bits (18 of them at 10,000
// entries) still tell most keys apart without reading them. The tables
// probe it themselves, as they alone know where a slot's key is; they
// hash a slot's key again where the index needs a hash's low bits, in
// growing and in emptying an entry, both rare beside a lookup.
type slotIndex []uint32

func (x slotIndex) mask() uint32 { return uint32(len(x) - 1) }

// entry returns the entry for slot id of a key whose hash is h.
func (x slotIndex) entry(h uint32, id int32) uint32 { return h&^x.mask() | uint32(id+1) }

// tagged reports whether e, not empty, can be of a key whose hash is h.
func (x slotIndex) tagged(e, h uint32) bool { return (e^h)&^x.mask() == 0 }

// slotOf returns the slot of e, not empty.
func (x slotIndex) slotOf(e uint32) int32 { return int32(e&x.mask()) - 1 }

// grow returns x, or x rehashed into a larger index, so that it holds n
// entries, and slots numbered below n, at most four in five of it used
// and a probe ends soon. hashOf returns the hash of a slot's key.
func (x slotIndex) grow(n int, hashOf func(id int32) uint32) slotIndex {
	if n*5 <= len(x)*4 {
		return x
	}
	size := 8
	for n*5 > size*4 {
		size *= 2
	}
	grown := make(slotIndex, size)
	touchFrom(grown, 0)
	for _, e := range x {
		if e != 0 {
			id := x.slotOf(e)
			grown.insert(hashOf(id), id)
		}
	}
	return grown
}

// insert files slot id, of a key whose hash is h and which x does not
// hold, at the first empty entry of its probe. x must have room.
func (x slotIndex) insert(h uint32, id int32) {
	mask := x.mask()
	pos := h & mask
	for x[pos] != 0 {
		pos = (pos + 1) & mask
	}
	x[pos] = x.entry(h, id)
}

// unindex empties the entry at pos, moving back the entries after it
// that a probe could no longer reach across the gap.
func (x slotIndex) unindex(pos uint32, hashOf func(id int32) uint32) {
	mask := x.mask()
	i := pos
	for j := (i + 1) & mask; x[j] != 0; j = (j + 1) & mask {
		if staysPast(int(i), int(j), int(hashOf(x.slotOf(x[j]))&mask)) {
			continue
		}
		x[i] = x[j]
		i = j
	}
	x[i] = 0
}
