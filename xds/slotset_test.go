package xds

import (
	"maps"
	"math/rand"
	"slices"
	"testing"
)

// TestSlotSetModel adds and removes random slots, across several words,
// and compares the set with a map after every step.
func TestSlotSetModel(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var s slotSet
	model := map[int]struct{}{}
	for step := range 2000 {
		slot := rng.Intn(200)
		if rng.Intn(2) == 0 {
			s.add(slot)
			model[slot] = struct{}{}
		} else {
			s.remove(slot)
			delete(model, slot)
		}
		var got []int
		s.each(func(i int) { got = append(got, i) })
		if want := slices.Sorted(maps.Keys(model)); !slices.Equal(got, want) || s.n != len(want) {
			t.Fatalf("step %d: set %v (n %d), want %v", step, got, s.n, want)
		}
	}
	var none *slotSet
	none.each(func(int) { t.Fatal("a nil set has no slots") })
}
