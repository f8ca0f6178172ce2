package krt

import (
	"fmt"
	"math/rand/v2"
	"slices"
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
		recs[i] = &fetchRec{in: &inputState{key: keys[i]}, filter: &filterSet{index: -1}}
	}
	t.Run("keys", func(t *testing.T) { checkSmallSet(t, keys, &smallSet[string]{}, (*smallSet[string])(nil)) })
	t.Run("reads", func(t *testing.T) { checkSmallSet(t, recs, &smallSet[*fetchRec]{}, (*smallSet[*fetchRec])(nil)) })
	// An index bucket: the same answers, and its keys listed in order
	// while they are few.
	t.Run("index keys", func(t *testing.T) {
		checkSmallSet(t, keys, newTestKeySet(keys, &keySet{}), newTestKeySet(keys, nil))
	})
}

// testKeySet is a keySet as a set of keys: each key has a slot in a table
// holding them all.
type testKeySet struct {
	set   *keySet
	items *itemTable[string]
}

func newTestKeySet(keys []string, set *keySet) *testKeySet {
	t := &testKeySet{set: set, items: &itemTable[string]{}}
	for _, k := range keys {
		t.items.set(k, k)
	}
	return t
}

func (t *testKeySet) slot(k string) int32 {
	id, ok := t.items.find(k)
	if !ok {
		panic("no slot for " + k)
	}
	return id
}

func (t *testKeySet) add(k string) bool    { return addSlot(t.set, t.items, t.slot(k)) }
func (t *testKeySet) remove(k string) bool { return t.set.remove(t.slot(k)) }
func (t *testKeySet) has(k string) bool    { return t.set.has(t.slot(k)) }
func (t *testKeySet) len() int             { return t.set.len() }
func (t *testKeySet) sorted() bool         { return t.set.sorted() }

func (t *testKeySet) appendTo(out []string) []string {
	for _, id := range t.set.appendTo(nil) {
		out = append(out, t.items.keyOf(id))
	}
	return out
}

// testSet is what smallSet and keySet share.
type testSet[E comparable] interface {
	add(E) bool
	remove(E) bool
	has(E) bool
	len() int
	appendTo([]E) []E
}

func checkSmallSet[E comparable, S testSet[E]](t *testing.T, elems []E, s, none S) {
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
		listed := s.appendTo(nil)
		each(s, func(e E) { seen[e]++ })
		checkOrder(t, st.name, s, listed)
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
	if none.len() != 0 || none.has(elems[0]) || len(none.appendTo(nil)) != 0 {
		t.Fatal("a nil set is not empty")
	}
	each(none, func(E) { t.Fatal("a nil set has elements") })
}

// each calls fn with every element of s: through smallSet.each where s
// has it, else through appendTo.
func each[E comparable](s testSet[E], fn func(E)) {
	if ss, ok := s.(*smallSet[E]); ok {
		ss.each(fn)
		return
	}
	for _, e := range s.appendTo(nil) {
		fn(e)
	}
}

// checkOrder fails when s is a keySet that says its keys are sorted and
// lists them out of order.
func checkOrder[E comparable](t *testing.T, step string, s testSet[E], listed []E) {
	t.Helper()
	ks, ok := any(s).(*testKeySet)
	if !ok {
		return
	}
	if keys := any(listed).([]string); ks.sorted() && !slices.IsSorted(keys) {
		t.Fatalf("%s: keys listed out of order: %v", step, keys)
	}
}

// TestKeySetOrder fills an index bucket in shuffled order: up to fewElems
// keys it lists them sorted and says so; past that it says they are not.
func TestKeySetOrder(t *testing.T) {
	keys := make([]string, 100)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%02d", i)
	}
	// Slots numbered against the keys' order, so that the slice's order is
	// the keys' and not the slots'.
	slices.Reverse(keys)
	s := newTestKeySet(keys, &keySet{})
	for i, j := range rand.New(rand.NewPCG(1, 2)).Perm(fewElems) {
		s.add(fmt.Sprintf("key-%02d", j))
		if got := s.appendTo(nil); !s.sorted() || !slices.IsSorted(got) || len(got) != i+1 {
			t.Fatalf("after %d adds: sorted() %v, keys %v", i+1, s.sorted(), got)
		}
	}
	s.remove("key-07")
	if got := s.appendTo(nil); !slices.IsSorted(got) || len(got) != fewElems-1 || s.has("key-07") {
		t.Fatalf("after a remove: keys %v", got)
	}
	s.add("key-07")
	s.add("key-99")
	if s.sorted() || s.len() != fewElems+1 {
		t.Fatalf("past fewElems: sorted() %v, len %d", s.sorted(), s.len())
	}
}
