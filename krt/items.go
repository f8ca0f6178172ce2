package krt

import (
	"iter"
	"math/bits"
	"slices"
	"strings"
)

// itemTable holds a collection's items: each in a slot of one array,
// found by its key through a map of slot numbers. A Go map holding the
// items themselves keeps every free slot of its tables item-sized, and a
// table of 10,000 entries has 16,384; a map of int32s keeps 4-byte ones,
// and the array is as long as the items are many. The indexes hold slot
// numbers too (see keySet), and a query reads an index's items from the
// array without looking their keys up again.
//
// A removed item's slot is cleared and reused by the next new key; the
// array, like a Go map, does not shrink. The writer changes the table
// under store.mu and reads it without; readers read it under the lock.
// The zero value is an empty table.
type itemTable[T any] struct {
	pos   map[string]int32
	slots []itemSlot[T]
	free  []int32  // cleared slots, reused last first
	freed []uint64 // a bit per slot, set while it is free; nil while none is
}

type itemSlot[T any] struct {
	key string
	val T
}

func (t *itemTable[T]) len() int { return len(t.pos) }

// reserve makes room for n more items at once, as a bulk load or a
// collection's first computation knows how many it will hold.
func (t *itemTable[T]) reserve(n int) {
	if len(t.pos) == 0 {
		t.pos = make(map[string]int32, n)
	}
	t.slots = slices.Grow(t.slots, n-len(t.free))
}

// find returns key's slot.
func (t *itemTable[T]) find(key string) (int32, bool) {
	id, ok := t.pos[key]
	return id, ok
}

// get returns the item under key.
func (t *itemTable[T]) get(key string) (T, bool) {
	if id, ok := t.pos[key]; ok {
		return t.slots[id].val, true
	}
	var zero T
	return zero, false
}

func (t *itemTable[T]) has(key string) bool {
	_, ok := t.pos[key]
	return ok
}

// slot returns slot id, which must hold an item.
func (t *itemTable[T]) slot(id int32) *itemSlot[T] { return &t.slots[id] }

// keyOf returns the key of the item in slot id.
func (t *itemTable[T]) keyOf(id int32) string { return t.slots[id].key }

// set stores v under key and returns its slot.
func (t *itemTable[T]) set(key string, v T) int32 {
	if id, ok := t.pos[key]; ok {
		t.slots[id].val = v
		return id
	}
	if t.pos == nil {
		t.pos = map[string]int32{}
	}
	var id int32
	if n := len(t.free); n > 0 {
		id = t.free[n-1]
		t.free = t.free[:n-1]
		t.freed[id/64] &^= 1 << (id % 64)
		t.slots[id] = itemSlot[T]{key: key, val: v}
	} else {
		id = int32(len(t.slots))
		t.slots = append(t.slots, itemSlot[T]{key: key, val: v})
	}
	t.pos[key] = id
	return id
}

// deleteAt removes the item in slot id, clearing the slot for reuse.
func (t *itemTable[T]) deleteAt(id int32) {
	delete(t.pos, t.slots[id].key)
	t.slots[id] = itemSlot[T]{}
	if len(t.pos) == 0 {
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
