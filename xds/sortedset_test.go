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

// TestSortedSetModel puts and removes random names, in random order,
// and compares the set with a map after every step, and its walk, in
// name order, every so often (a walk merges the overlay).
func TestSortedSetModel(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var h heldSet
	var ns nameSet
	model := map[string]*resource{}
	for step := range 20000 {
		name := fmt.Sprintf("n%04d", rng.Intn(1000))
		want, was := model[name]
		if rng.Intn(3) == 0 {
			old, had := h.remove(name)
			_, named := ns.remove(name)
			if old != want || had != was || named != was {
				t.Fatalf("step %d: remove %s returned %v %v (named %v), want %v %v", step, name, old, had, named, want, was)
			}
			delete(model, name)
		} else {
			r := &resource{name: name, version: fmt.Sprint(step)}
			old, had := h.put(r)
			_, named := ns.put(name)
			if old != want || had != was || named != was {
				t.Fatalf("step %d: put %s returned %v %v (named %v), want %v %v", step, name, old, had, named, want, was)
			}
			model[name] = r
		}
		checkSortedSet(t, step, &h, &ns, model, step%500 == 0)
	}
}

func checkSortedSet(t *testing.T, step int, h *heldSet, ns *nameSet, model map[string]*resource, walk bool) {
	t.Helper()
	if h.len() != len(model) || ns.len() != len(model) {
		t.Fatalf("step %d: len %d and %d, want %d", step, h.len(), ns.len(), len(model))
	}
	for n, want := range model {
		if got, ok := h.get(n); !ok || got != want || !h.has(n) || !ns.has(n) {
			t.Fatalf("step %d: get %s = %v, want %v", step, n, got, want)
		}
	}
	if _, ok := h.get("zz"); ok || h.has("zz") || ns.has("zz") {
		t.Fatalf("step %d: a name never put is held", step)
	}
	if !walk {
		return
	}
	want := slices.Sorted(maps.Keys(model))
	if got := h.names(); !slices.Equal(got, want) {
		t.Fatalf("step %d: names %v, want %v", step, got, want)
	}
	if got := ns.all(); !slices.Equal(got, want) {
		t.Fatalf("step %d: names %v, want %v", step, got, want)
	}
}

// TestSortedSetFillShares fills sets with one slice and changes them
// every way a set changes: each sees its own changes, and the slice
// shared stays as it was.
func TestSortedSetFillShares(t *testing.T) {
	shared := []string{"b", "d", "f"}
	change := map[string]func(*nameSet){
		"replace":  func(s *nameSet) { s.put("d") },
		"append":   func(s *nameSet) { s.put("g") },
		"insert":   func(s *nameSet) { s.put("c") },
		"drop end": func(s *nameSet) { s.remove("f") },
		"drop mid": func(s *nameSet) { s.remove("b") },
		"grow":     func(s *nameSet) { s.grow(10); s.put("z") },
	}
	want := map[string][]string{
		"replace": {"b", "d", "f"}, "append": {"b", "d", "f", "g"}, "insert": {"b", "c", "d", "f"},
		"drop end": {"b", "d"}, "drop mid": {"d", "f"}, "grow": {"b", "d", "f", "z"},
	}
	for name, f := range change {
		var s nameSet
		s.fill(shared)
		if &s.all()[0] != &shared[0] {
			t.Fatalf("%s: fill copied the slice", name)
		}
		f(&s)
		if got := s.all(); !slices.Equal(got, want[name]) {
			t.Errorf("%s: set holds %v, want %v", name, got, want[name])
		}
		if !slices.Equal(shared, []string{"b", "d", "f"}) || cap(shared) != 3 {
			t.Fatalf("%s: changed the shared slice: %v", name, shared)
		}
	}
}

// TestSortedSetShare interns a set's values: it then holds the slice
// intern returned and copies it before changing it.
func TestSortedSetShare(t *testing.T) {
	other := []*resource{{name: "a"}, {name: "b"}}
	var h heldSet
	h.put(other[0])
	h.put(other[1])
	h.share(func([]*resource) []*resource { return other })
	if &h.all()[0] != &other[0] {
		t.Fatal("share kept the set's own slice")
	}
	h.put(&resource{name: "a", version: "2"})
	if other[0].version != "" || h.all()[0].version != "2" {
		t.Fatalf("a change after share: shared %v, set %v", other[0], h.all()[0])
	}
}

// TestSortedSetShareFilled: a set sharing a slice it was filled with
// offers it to intern too, and takes the list intern returns.
func TestSortedSetShareFilled(t *testing.T) {
	mine, kept := []string{"a", "b"}, append(make([]string, 0, 4), "a", "b")
	var n nameSet
	n.fill(mine)
	var offered []string
	n.share(func(l []string) []string { offered = l; return kept })
	if &offered[0] != &mine[0] || &n.all()[0] != &kept[0] {
		t.Fatal("a filled set was not interned")
	}
	n.put("c")
	if kept[:3][2] != "" || !slices.Equal(n.all(), []string{"a", "b", "c"}) {
		t.Fatalf("a change after share: kept %v, set %v", kept, n.all())
	}
}
