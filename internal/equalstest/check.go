package equalstest

import (
	"reflect"
	"testing"
)

// Equaler is a type with a hand-written Equals method.
type Equaler[T any] interface {
	Equals(T) bool
}

// Check reports, through t, every one-place variant of full that full
// (or the variant) Equals, and every zero leaf of full. It also reports if
// full does not Equals a deep copy of itself (one comparing pointers, say,
// rather than what they point to, which would defeat the early cutoff).
func Check[T Equaler[T]](t testing.TB, full T) {
	t.Helper()
	if twin := deepCopy(reflect.ValueOf(full)).Interface().(T); !full.Equals(twin) || !twin.Equals(full) {
		t.Errorf("%T: a value does not Equals a deep copy of itself", full)
		return
	}
	n := 0
	for v := range variants(full) {
		n++
		if v.zero {
			t.Errorf("%T%s is zero: populate it, so that a change to it shows", full, v.path)
			continue
		}
		other := v.value.Interface().(T)
		if full.Equals(other) || other.Equals(full) {
			t.Errorf("%T: Equals misses a change to %s", full, v.path)
		}
	}
	if n == 0 {
		t.Errorf("%T: no field to change", full)
	}
}
