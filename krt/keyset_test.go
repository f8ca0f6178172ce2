package krt

import (
	"fmt"
	"slices"
	"testing"
)

// TestKeySet files and unfiles keys across the move from a slice to a
// map, checking every answer and the content against a plain map.
func TestKeySet(t *testing.T) {
	keys := make([]string, 3*fewKeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns/item-%d", i)
	}
	steps := []struct {
		name string
		add  bool
		keys []string
	}{
		{"add a few", true, keys[:3]},
		{"add one again", true, keys[1:2]},
		{"remove the first", false, keys[:1]},
		{"remove an absent one", false, keys[:1]},
		{"fill past the slice", true, keys},
		{"add again as a map", true, keys[5:6]},
		{"remove most", false, keys[2:]},
		{"remove again as a map", false, keys[7:8]},
		{"refill", true, keys[:fewKeys]},
	}
	var s keySet
	want := map[string]bool{}
	for _, st := range steps {
		for _, k := range st.keys {
			var changed bool
			if st.add {
				changed = s.add(k)
			} else {
				changed = s.remove(k)
			}
			if wantChange := st.add != want[k]; changed != wantChange {
				t.Fatalf("%s: %q changed %v, want %v", st.name, k, changed, wantChange)
			}
			if st.add {
				want[k] = true
			} else {
				delete(want, k)
			}
		}
		got := s.appendTo(nil)
		slices.Sort(got)
		if len(got) != len(want) || s.len() != len(want) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Fatalf("%s: keys %v (len %d), want %d distinct", st.name, got, s.len(), len(want))
		}
		for _, k := range keys {
			if s.has(k) != want[k] || slices.Contains(got, k) != want[k] {
				t.Fatalf("%s: has(%q) = %v, listed %v, want %v", st.name, k, s.has(k), slices.Contains(got, k), want[k])
			}
		}
	}
	var none *keySet
	if none.len() != 0 || none.has("x") || len(none.appendTo(nil)) != 0 {
		t.Fatal("a nil set is not empty")
	}
}
