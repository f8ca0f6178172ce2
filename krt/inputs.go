package krt

// inputTable holds a derived collection's input entries, found by key
// through a slotIndex. The entries keep their keys, so the table keeps a
// pointer per entry in an array and half a word per index entry, where a Go
// map keyed by the inputs keeps every key again beside its pointer, in
// every slot of its tables, free or not (16,384 of them for 10,000
// inputs). A removed entry's slot takes the last entry, so that the array
// is as long as the entries are many; the index, like a Go map, does not
// shrink. Only the writer reads and changes it. The zero value is empty.
type inputTable struct {
	index slotIndex
	slots []*inputState
}

// reserve makes room for n more entries at once, as a collection's first
// computation knows how many inputs it has.
func (t *inputTable) reserve(n int) {
	t.index = t.index.grow(len(t.slots)+n, t.hashOf)
	t.slots = growTouched(t.slots, n)
}

// lookup returns the position in the index of key's entry and the entry,
// or the position of the empty index entry that ends its probe and nil.
func (t *inputTable) lookup(key string, h uint32) (uint32, *inputState) {
	mask := t.index.mask()
	for pos := h & mask; ; pos = (pos + 1) & mask {
		e := t.index[pos]
		if e == 0 {
			return pos, nil
		}
		if t.index.tagged(e, h) {
			if st := t.slots[t.index.slotOf(e)]; st.key == key {
				return pos, st
			}
		}
	}
}

// get returns the entry of input key, or nil.
func (t *inputTable) get(key string) *inputState {
	if len(t.slots) == 0 {
		return nil
	}
	_, st := t.lookup(key, hashKey(key))
	return st
}

// add stores st, whose key the table must not hold yet.
func (t *inputTable) add(st *inputState) {
	t.index = t.index.grow(len(t.slots)+1, t.hashOf)
	t.index.insert(hashKey(st.key), int32(len(t.slots)))
	t.slots = append(t.slots, st)
}

// remove drops st, if the table holds it (and not a later entry made for
// its key), moving the last entry into its slot.
func (t *inputTable) remove(st *inputState) {
	if len(t.slots) == 0 {
		return
	}
	pos, held := t.lookup(st.key, hashKey(st.key))
	if held != st {
		return
	}
	id := t.index.slotOf(t.index[pos])
	t.index.unindex(pos, t.hashOf)
	last := int32(len(t.slots) - 1)
	if id != last {
		moved := t.slots[last]
		h := hashKey(moved.key)
		mpos, _ := t.lookup(moved.key, h)
		t.index[mpos] = t.index.entry(h, id)
		t.slots[id] = moved
	}
	t.slots[last] = nil
	t.slots = t.slots[:last]
}

// hashOf returns the hash of the key of the entry in slot id.
func (t *inputTable) hashOf(id int32) uint32 { return hashKey(t.slots[id].key) }

// all returns every entry, in no particular order; the writer must not
// change the table while the caller ranges over them.
func (t *inputTable) all() []*inputState { return t.slots }
