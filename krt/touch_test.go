package krt

import (
	"fmt"
	"testing"
)

// TestGrowTouchedKeepsValues: growing a slice of pointers past touchMin,
// with stale pointers beyond its length in the old array, keeps every
// element the new array holds, the stale ones included, and leaves the
// new room zero; growing within the capacity touches nothing.
func TestGrowTouchedKeepsValues(t *testing.T) {
	vals := make([]*string, 0, 1000)
	for i := range cap(vals) {
		s := fmt.Sprint(i)
		vals = append(vals, &s)
	}
	stale := vals[:10] // 990 pointers beyond the length
	grown := growTouched(stale, 3*touchMin/8)
	if cap(grown) == cap(vals) {
		t.Fatal("the slice did not grow: the test needs a new array")
	}
	for i, p := range grown[:cap(vals)] {
		if p == nil || *p != fmt.Sprint(i) {
			t.Fatalf("element %d changed to %v", i, p)
		}
	}
	for i, p := range grown[cap(vals):cap(grown)] {
		if p != nil {
			t.Fatalf("new element %d is %v, want nil", cap(vals)+i, p)
		}
	}
	same := growTouched(grown, 1)
	if &same[:1][0] != &grown[:1][0] {
		t.Fatal("growing within the capacity made a new array")
	}
}

// TestTouchedIndexIsEmpty: a grown slotIndex, touched as it is made,
// holds only the entries inserted.
func TestTouchedIndexIsEmpty(t *testing.T) {
	hashes := map[int32]uint32{}
	x := slotIndex(nil).grow(100_000, func(id int32) uint32 { return hashes[id] })
	if n := len(x) * 4; n < touchMin {
		t.Fatalf("index of %d bytes is below touchMin: the test touches nothing", n)
	}
	for i, e := range x {
		if e != 0 {
			t.Fatalf("entry %d is %#x in a new index", i, e)
		}
	}
}
