// Package equalstest checks hand-written Equals methods for missed fields,
// for tests only. krt's early cutoff trusts Equals: a field it forgets to
// compare is a change that is silently never propagated.
//
// [Check] takes a fully populated value and builds every variant of it that
// differs in one place: each field in turn, recursing into structs,
// pointers, slices, arrays, maps and interfaces. Each variant must compare
// unequal to the original, both ways round, while a deep copy must compare
// equal. A package's test lists its
// types in a table:
//
//	func TestEquals(t *testing.T) {
//		equalstest.Check(t, Workload{Name: "a", Namespace: "b", Labels: map[string]string{"k": "v"}})
//		equalstest.Check(t, ServiceInfo{...})
//	}
//
// How a leaf changes: a bool flips, a number grows by one, a string grows by
// a character. A struct with unexported fields (time.Time, a protobuf
// message) cannot be rebuilt field by field, so it is an opaque leaf: its
// variant is its zero value, and a pointer to one is replaced by a pointer
// to a zero value and by nil. A slice also loses its last element, and a
// map an entry and the key of an entry. Every leaf must be non-zero, so
// that the value really is fully populated: Check reports the zero ones.
package equalstest
