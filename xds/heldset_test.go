package xds

import (
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"testing"
)

// heldMap returns what h holds as a map, for tests to compare and walk.
func heldMap(h heldSet) map[string]*resource {
	out := make(map[string]*resource, h.len())
	for _, r := range h.all() {
		out[r.name] = r
	}
	return out
}

// TestHeldSetModel puts and removes random names and compares the set
// with a map after every step: same entries, kept in name order.
func TestHeldSetModel(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var h heldSet
	model := map[string]*resource{}
	for step := range 3000 {
		name := fmt.Sprintf("n%02d", rng.Intn(60))
		if rng.Intn(3) == 0 {
			old, had := h.remove(name)
			if want, ok := model[name]; old != want || had != ok {
				t.Fatalf("step %d: remove %s returned %v %v, want %v %v", step, name, old, had, want, ok)
			}
			delete(model, name)
		} else {
			r := &resource{name: name, version: fmt.Sprint(step)}
			old, had := h.put(r)
			if want, ok := model[name]; old != want || had != ok {
				t.Fatalf("step %d: put %s returned %v %v, want %v %v", step, name, old, had, want, ok)
			}
			model[name] = r
		}
		if got, want := h.names(), slices.Sorted(maps.Keys(model)); !slices.Equal(got, want) {
			t.Fatalf("step %d: names %v, want %v", step, got, want)
		}
		for n, want := range model {
			if got, ok := h.get(n); !ok || got != want || !h.has(n) {
				t.Fatalf("step %d: get %s = %v, want %v", step, n, got, want)
			}
		}
		if _, ok := h.get("zz"); ok || h.has("zz") {
			t.Fatalf("step %d: a name never put is held", step)
		}
	}
}
