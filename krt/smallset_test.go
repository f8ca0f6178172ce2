package krt

import (
	"fmt"
	"testing"
)

// TestSmallSet adds and removes elements across the move from a slice to
// a map, for both kinds of element, checking every answer and the content
// against a plain map.
func TestSmallSet(t *testing.T) {
	keys := make([]string, 3*fewElems)
	recs := make([]*fetchRec, 3*fewElems)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns/item-%d", i)
		recs[i] = &fetchRec{in: &inputState{key: keys[i]}, filter: &noFilter}
	}
	t.Run("keys", func(t *testing.T) { checkSmallSet(t, keys) })
	t.Run("reads", func(t *testing.T) { checkSmallSet(t, recs) })
}

func checkSmallSet[E comparable](t *testing.T, elems []E) {
	steps := []struct {
		name  string
		add   bool
		elems []E
	}{
		{"add a few", true, elems[:3]},
		{"add one again", true, elems[1:2]},
		{"remove the first", false, elems[:1]},
		{"remove an absent one", false, elems[:1]},
		{"fill past the slice", true, elems},
		{"add again as a map", true, elems[5:6]},
		{"remove most", false, elems[2:]},
		{"remove again as a map", false, elems[7:8]},
		{"refill", true, elems[:fewElems]},
	}
	var s smallSet[E]
	want := map[E]bool{}
	for _, st := range steps {
		for i, e := range st.elems {
			var changed bool
			if st.add {
				changed = s.add(e)
			} else {
				changed = s.remove(e)
			}
			if wantChange := st.add != want[e]; changed != wantChange {
				t.Fatalf("%s: element %d changed %v, want %v", st.name, i, changed, wantChange)
			}
			if st.add {
				want[e] = true
			} else {
				delete(want, e)
			}
		}
		seen := map[E]int{}
		s.each(func(e E) { seen[e]++ })
		listed := s.appendTo(nil)
		if len(seen) != len(want) || len(listed) != len(want) || s.len() != len(want) {
			t.Fatalf("%s: each saw %d, appendTo %d, len %d; want %d", st.name, len(seen), len(listed), s.len(), len(want))
		}
		for _, e := range listed {
			if seen[e] != 1 || !want[e] {
				t.Fatalf("%s: unexpected or repeated element", st.name)
			}
		}
		for i, e := range elems {
			if s.has(e) != want[e] {
				t.Fatalf("%s: has(element %d) = %v, want %v", st.name, i, s.has(e), want[e])
			}
		}
	}
	var none *smallSet[E]
	if none.len() != 0 || none.has(elems[0]) || len(none.appendTo(nil)) != 0 {
		t.Fatal("a nil set is not empty")
	}
	none.each(func(E) { t.Fatal("a nil set has elements") })
}
