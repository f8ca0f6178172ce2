package krt

import (
	"hash/maphash"
	"iter"
	"math/bits"
	"slices"
	"strings"
)

// itemTable holds a collection's items, each in a slot of one array,
// and finds a key's slot through an index of slot numbers (slotIndex):
// an open-addressing hash table probed linearly, each entry a slot number
// and part of the hash of its key in half a word. A Go map keyed by the
// items' keys keeps a 16-byte key, and with the items as values an item,
// in every slot of its tables, free or not (16,384 of them for 10,000
// entries); this keeps 4 bytes, and the array is as long as the items are
// many.
// (It is the layout of a Python dict.) The indexes hold slot numbers too
// (see keySet), and a query reads an index's items from the array without
// looking their keys up.
//
// A removed item's slot is cleared and reused by the next new key; the
// array, like a Go map, does not shrink while it holds any item. The
// writer changes the table under store.mu and reads it without; readers
// read it under the lock. The zero value is an empty table.
type itemTable[T any] struct {
	index slotIndex
	slots []itemSlot[T]
	n     int      // items held
	free  []int32  // cleared slots, reused last first
	freed []uint64 // a bit per slot, set while it is free; nil while none is
	// gen counts the changes to the items: a query's result is the same
	// while it is (see fetchmemo.go).
	gen uint64
}

type itemSlot[T any] struct {
	key string
	val T
}

// keySeed seeds every table's hash: a process's own, as a Go map's is.
var keySeed = maphash.MakeSeed()

func hashKey(key string) uint32 { return uint32(maphash.String(keySeed, key)) }

func (t *itemTable[T]) len() int { return t.n }

// reserve makes room for n more items at once, as a bulk load or a
// collection's first computation knows how many it will hold.
func (t *itemTable[T]) reserve(n int) {
	t.resizeIndex(t.n + n)
	t.slots = growTouched(t.slots, n-len(t.free))
}

// lookup returns the position in the index of key's entry, or of the
// empty entry that ends its probe.
func (t *itemTable[T]) lookup(key string, h uint32) (pos uint32, id int32, ok bool) {
	mask := t.index.mask()
	for pos = h & mask; ; pos = (pos + 1) & mask {
		e := t.index[pos]
		if e == 0 {
			return pos, -1, false
		}
		if t.index.tagged(e, h) {
			if id = t.index.slotOf(e); t.slots[id].key == key {
				return pos, id, true
			}
		}
	}
}

// find returns key's slot.
func (t *itemTable[T]) find(key string) (int32, bool) {
	if t.n == 0 {
		return -1, false
	}
	_, id, ok := t.lookup(key, hashKey(key))
	return id, ok
}

// get returns the item under key.
func (t *itemTable[T]) get(key string) (T, bool) {
	if id, ok := t.find(key); ok {
		return t.slots[id].val, true
	}
	var zero T
	return zero, false
}

func (t *itemTable[T]) has(key string) bool {
	_, ok := t.find(key)
	return ok
}

// set stores v under key and returns its slot.
func (t *itemTable[T]) set(key string, v T) int32 {
	h, id, held := t.locate(key)
	return t.setAt(key, h, id, held, v)
}

// locate returns the hash of key and, when the table holds key, its
// slot: what setAt needs, so that a write after a read of the same key
// (store.put compares the old item first) probes the index once.
func (t *itemTable[T]) locate(key string) (h uint32, id int32, held bool) {
	h = hashKey(key)
	if t.n == 0 {
		return h, -1, false
	}
	_, id, held = t.lookup(key, h)
	return h, id, held
}

// setAt stores v under key, whose hash and slot locate returned with no
// change to the table since, and returns its slot.
func (t *itemTable[T]) setAt(key string, h uint32, id int32, held bool, v T) int32 {
	t.gen++
	if held {
		t.slots[id].val = v
		return id
	}
	if n := len(t.free); n > 0 {
		id = t.free[n-1]
		t.free = t.free[:n-1]
		t.freed[id/64] &^= 1 << (id % 64)
		t.slots[id] = itemSlot[T]{key: key, val: v}
	} else {
		id = int32(len(t.slots))
		t.slots = append(t.slots, itemSlot[T]{key: key, val: v})
	}
	t.resizeIndex(max(t.n+1, len(t.slots)))
	t.index.insert(h, id)
	t.n++
	return id
}

// resizeIndex makes the index large enough for n entries.
func (t *itemTable[T]) resizeIndex(n int) { t.index = t.index.grow(n, t.hashOf) }

// hashOf returns the hash of the key in slot id.
func (t *itemTable[T]) hashOf(id int32) uint32 { return hashKey(t.slots[id].key) }

// deleteAt removes the item in slot id, clearing the slot for reuse.
func (t *itemTable[T]) deleteAt(id int32) {
	t.gen++
	key := t.slots[id].key
	pos, _, _ := t.lookup(key, hashKey(key))
	t.index.unindex(pos, t.hashOf)
	t.n--
	t.slots[id] = itemSlot[T]{}
	if t.n == 0 {
		// Empty again: start over rather than keep a free list as long
		// as the largest the collection ever was.
		clear(t.slots)
		t.slots, t.free, t.freed = t.slots[:0], nil, nil
		return
	}
	if words := (len(t.slots) + 63) / 64; len(t.freed) < words {
		t.freed = append(t.freed, make([]uint64, words-len(t.freed))...)
	}
	t.freed[id/64] |= 1 << (id % 64)
	t.free = append(t.free, id)
}

// slot returns slot id, which must hold an item.
func (t *itemTable[T]) slot(id int32) *itemSlot[T] { return &t.slots[id] }

// keyOf returns the key of the item in slot id.
func (t *itemTable[T]) keyOf(id int32) string { return t.slots[id].key }

// isFree reports whether slot id holds no item.
func (t *itemTable[T]) isFree(id int) bool {
	w := id / 64 // slots appended since the last free have no word yet
	return w < len(t.freed) && t.freed[w]&(1<<(id%64)) != 0
}

// all yields every slot holding an item with its item, in slot order.
func (t *itemTable[T]) all() iter.Seq2[int32, *itemSlot[T]] {
	return func(yield func(int32, *itemSlot[T]) bool) {
		for i := range t.slots {
			if len(t.freed) > 0 && t.isFree(i) {
				continue
			}
			if !yield(int32(i), &t.slots[i]) {
				return
			}
		}
	}
}

// keys yields every key, in slot order.
func (t *itemTable[T]) keys() iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, sl := range t.all() {
			if !yield(sl.key) {
				return
			}
		}
	}
}

// sortIDs orders ids by their items' keys.
func (t *itemTable[T]) sortIDs(ids []int32) {
	slices.SortFunc(ids, func(a, b int32) int { return strings.Compare(t.slots[a].key, t.slots[b].key) })
}

// freeCount is the number of cleared slots, for tests.
func (t *itemTable[T]) freeCount() int {
	n := 0
	for _, w := range t.freed {
		n += bits.OnesCount64(w)
	}
	return n
}
