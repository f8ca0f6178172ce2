package krt

import "testing"

// TestReadList replaces an input's reads with lists of every length up to
// past what its entry holds in place, and checks that each is held in
// order, as a record of the input, the first two in the entry itself.
func TestReadList(t *testing.T) {
	st := &inputState{key: "in"}
	srcs := make([]dependents, 5)
	filters := make([]filterSet, len(srcs))
	for i := range srcs {
		filters[i] = filterSet{index: -1, src: &srcs[i]}
	}
	for n := range len(srcs) + 1 {
		recs := make([]fetchRec, n)
		for i := range recs {
			recs[i] = fetchRec{filter: &filters[i]}
		}
		st.reads.replace(st, recs)
		if got := st.reads.len(); got != n {
			t.Fatalf("replaced with %d reads: len %d", n, got)
		}
		var seen []*dependents
		st.reads.each(func(r *fetchRec) {
			if r.in != st {
				t.Fatalf("read %d of %d is not a record of the input", len(seen), n)
			}
			seen = append(seen, r.filter.src)
		})
		for i, src := range seen {
			if src != &srcs[i] {
				t.Fatalf("%d reads: read %d is of source %p, want %p", n, i, src, &srcs[i])
			}
		}
		if len(seen) != n {
			t.Fatalf("each visited %d of %d reads", len(seen), n)
		}
		for i := range n {
			if !st.reads.matches(i, &filters[i]) {
				t.Fatalf("%d reads: read %d does not match what was recorded", n, i)
			}
			if i < len(st.reads.first) && st.reads.at(i) != &st.reads.first[i] {
				t.Fatalf("%d reads: read %d is not held in the entry", n, i)
			}
		}
		if st.reads.matches(n, &filters[0]) {
			t.Fatalf("%d reads: a read past the last matches", n)
		}
	}
}

// TestSerialRunScratchCleared builds a collection serially, where each
// input's reads are recorded in the writer's slot's scratch, and checks
// that the slot keeps none of them afterwards: a kept read's filter
// points at the collection, which would then outlive its sub-graph.
func TestSerialRunScratchCleared(t *testing.T) {
	g := NewGraph(WithParallelism(1))
	key := WithKey(func(s string) string { return s })
	in := NewStatic[string](g, key)
	other := NewStatic[string](g, key)
	in.Set("a", "b", "c")
	other.Set("x")
	out := NewCollection(g, in, func(ctx HandlerContext, s string) *string {
		Fetch(ctx, other, FilterKey("x"))
		Fetch(ctx, other)
		return &s
	}, key)
	if out.Len() != 3 {
		t.Fatalf("%d outputs, want 3", out.Len())
	}
	slot := &g.computing[0]
	if slot.scratch != [len(slot.scratch)]fetchRec{} || slot.spare != nil {
		t.Fatalf("the writer's slot keeps reads: scratch %v, spare %d", slot.scratch, len(slot.spare))
	}
}
