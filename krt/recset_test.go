package krt

import "testing"

// TestRecSet files and unfiles reads across the move from a slice to a
// map, checking every answer and the content against a plain map.
func TestRecSet(t *testing.T) {
	recs := make([]*fetchRec, 3*fewReads)
	for i := range recs {
		recs[i] = &fetchRec{in: &inputState{key: string(rune('a' + i))}, filter: &noFilter}
	}
	steps := []struct {
		name string
		add  bool
		recs []*fetchRec
	}{
		{"add a few", true, recs[:3]},
		{"add one again", true, recs[1:2]},
		{"remove the first", false, recs[:1]},
		{"remove an absent one", false, recs[:1]},
		{"fill past the slice", true, recs},
		{"add again as a map", true, recs[5:6]},
		{"remove most", false, recs[2:]},
		{"remove again as a map", false, recs[7:8]},
		{"refill", true, recs[:fewReads]},
	}
	var s recSet
	want := map[*fetchRec]bool{}
	for _, st := range steps {
		for _, r := range st.recs {
			var changed bool
			if st.add {
				changed = s.add(r)
			} else {
				changed = s.remove(r)
			}
			if wantChange := st.add != want[r]; changed != wantChange {
				t.Fatalf("%s: %q changed %v, want %v", st.name, r.in.key, changed, wantChange)
			}
			want[r] = st.add
			if !st.add {
				delete(want, r)
			}
		}
		seen := map[*fetchRec]bool{}
		s.each(func(r *fetchRec) {
			if !want[r] || seen[r] {
				t.Fatalf("%s: unexpected or repeated read %q", st.name, r.in.key)
			}
			seen[r] = true
		})
		if len(seen) != len(want) || s.len() != len(want) {
			t.Fatalf("%s: %d reads (len %d), want %d", st.name, len(seen), s.len(), len(want))
		}
	}
	var none *recSet
	if none.len() != 0 {
		t.Fatal("a nil set is not empty")
	}
	none.each(func(*fetchRec) { t.Fatal("a nil set has reads") })
}
