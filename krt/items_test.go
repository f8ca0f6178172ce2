package krt

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestItemTable applies random sets and deletes to a table and to a map,
// at several sizes, checking each answer and, every few steps, the whole
// content.
func TestItemTable(t *testing.T) {
	for _, keys := range []int{1, 10, 200, 3000} {
		t.Run("keys="+strconv.Itoa(keys), func(t *testing.T) { checkItemTable(t, keys) })
	}
}

func checkItemTable(t *testing.T, keys int) {
	rng := rand.New(rand.NewPCG(3, uint64(keys)))
	var tab itemTable[int]
	model := map[string]int{}
	for step := 1; step <= 8000; step++ {
		key := "k" + strconv.Itoa(rng.IntN(keys))
		if rng.IntN(3) == 0 {
			if id, ok := tab.find(key); ok {
				tab.deleteAt(id)
			}
			delete(model, key)
		} else {
			tab.set(key, step)
			model[key] = step
		}
		if v, ok := tab.get(key); ok != (model[key] != 0) || v != model[key] || tab.len() != len(model) {
			t.Fatalf("step %d: get(%q) = %d, %v, len %d; want %d, len %d", step, key, v, ok, tab.len(), model[key], len(model))
		}
		if step%max(1, keys/50) == 0 { // the whole content, every few steps
			checkItemTableContent(t, step, &tab, model, keys)
		}
	}
}

// checkItemTableContent checks that the table holds what model does, that
// every slot it yields is one find returns, that cleared slots are reused
// and that the index has one entry per item.
func checkItemTableContent(t *testing.T, step int, tab *itemTable[int], model map[string]int, keys int) {
	t.Helper()
	got := map[string]int{}
	for id, sl := range tab.all() {
		if fid, ok := tab.find(sl.key); !ok || fid != id {
			t.Fatalf("step %d: slot %d holds %q, which find puts at %d (%v)", step, id, sl.key, fid, ok)
		}
		got[sl.key] = sl.val
	}
	if !maps.Equal(got, model) {
		t.Fatalf("step %d: table holds %v, want %v", step, got, model)
	}
	if len(tab.slots) > keys || tab.freeCount() != len(tab.slots)-tab.len() {
		t.Fatalf("step %d: %d slots, %d free, %d items: slots not reused", step, len(tab.slots), tab.freeCount(), tab.len())
	}
	if used := len(tab.index) - countZero(tab.index); used != tab.len() {
		t.Fatalf("step %d: %d index entries for %d items", step, used, tab.len())
	}
}

// TestItemTableSortIDs orders slots by their keys, whatever the slots'
// own order.
func TestItemTableSortIDs(t *testing.T) {
	var tab itemTable[struct{}]
	for _, k := range []string{"c", "a", "d", "b"} {
		tab.set(k, struct{}{})
	}
	ids := []int32{0, 1, 2, 3}
	tab.sortIDs(ids)
	var keys []string
	for _, id := range ids {
		keys = append(keys, tab.keyOf(id))
	}
	if !slices.Equal(keys, []string{"a", "b", "c", "d"}) {
		t.Fatalf("sorted keys %v", keys)
	}
}

func countZero(words slotIndex) int {
	n := 0
	for _, w := range words {
		if w == 0 {
			n++
		}
	}
	return n
}
