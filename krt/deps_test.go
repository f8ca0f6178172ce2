package krt

import "testing"

// TestShareFilter files reads of two different filters, interleaved, in
// the buckets they share, and checks that each read ends up holding the
// first copy of its filter, and that no read holds the other's.
func TestShareFilter(t *testing.T) {
	var d dependents
	selects := func(labels map[string]string) *filterSet {
		return &filterSet{src: &d, index: -1, hasSelects: true, selects: labels}
	}
	var first [2]*filterSet
	for i, kind := range []int{0, 0, 1, 0, 1, 1, 0} {
		labels := map[string]string{"app": "a"} // a map of its own, as each pod's labels are
		if kind == 1 {
			labels["tier"] = "web"
		}
		rec := &fetchRec{in: &inputState{key: "in"}, filter: selects(labels)}
		d.file(rec, true)
		if first[kind] == nil {
			first[kind] = rec.filter
		}
		if rec.filter != first[kind] {
			t.Fatalf("read %d (filter %d) holds %p, want the first copy %p", i, kind, rec.filter, first[kind])
		}
	}
	if first[0] == first[1] || !first[1].hasSelects || len(first[1].selects) != 2 {
		t.Fatalf("the two filters merged: %+v, %+v", first[0], first[1])
	}
	if d.total != 7+3 { // the second filter is filed under both its pairs
		t.Fatalf("filed %d reads, want 10", d.total)
	}
}
