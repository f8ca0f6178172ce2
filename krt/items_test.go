package krt

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestItemTable applies random sets and deletes to a table and to a map,
// checking after each that the table holds what the map does, that every
// slot it yields is one find returns, and that cleared slots are reused.
func TestItemTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var tab itemTable[int]
	model := map[string]int{}
	for step := range 5000 {
		key := "k" + strconv.Itoa(rng.IntN(200))
		if rng.IntN(3) == 0 {
			if id, ok := tab.find(key); ok {
				tab.deleteAt(id)
			}
			delete(model, key)
		} else {
			tab.set(key, step)
			model[key] = step
		}
		if tab.len() != len(model) {
			t.Fatalf("step %d: len %d, want %d", step, tab.len(), len(model))
		}
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
		if v, ok := tab.get(key); ok != has(modelKeys(model), key) || (ok && v != model[key]) {
			t.Fatalf("step %d: get(%q) = %d, %v", step, key, v, ok)
		}
		if len(tab.slots) > 200 || tab.freeCount() != len(tab.slots)-tab.len() {
			t.Fatalf("step %d: %d slots, %d free, %d items: slots not reused", step, len(tab.slots), tab.freeCount(), tab.len())
		}
	}
}

func modelKeys(m map[string]int) map[string]struct{} {
	out := map[string]struct{}{}
	for k := range m {
		out[k] = struct{}{}
	}
	return out
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
