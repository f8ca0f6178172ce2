package krt

import (
	"math/rand/v2"
	"testing"
)

// TestHashSet adds and removes random elements, through several growths,
// checking each answer against a map and, every few steps, the whole
// content and that no element is found but through its own probe.
func TestHashSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var s hashSet[int32]
	model := map[int32]bool{}
	for step := range 20000 {
		e := int32(rng.IntN(3000))
		var changed bool
		if rng.IntN(3) == 0 {
			changed = s.remove(e)
			if changed != model[e] {
				t.Fatalf("step %d: remove(%d) = %v, want %v", step, e, changed, model[e])
			}
			delete(model, e)
		} else {
			changed = s.add(e)
			if changed == model[e] {
				t.Fatalf("step %d: add(%d) = %v, want %v", step, e, changed, !model[e])
			}
			model[e] = true
		}
		if s.has(e) != model[e] || s.n != len(model) {
			t.Fatalf("step %d: has(%d) = %v, n %d; want %v, %d", step, e, s.has(e), s.n, model[e], len(model))
		}
		if step%100 == 0 {
			seen := 0
			for x := range s.all {
				if !model[x] {
					t.Fatalf("step %d: holds %d, which was removed", step, x)
				}
				seen++
			}
			if seen != len(model) || (s.n+1)*5 > len(s.elems)*4+5 {
				t.Fatalf("step %d: %d elements seen of %d, in %d positions", step, seen, len(model), len(s.elems))
			}
		}
	}
}
