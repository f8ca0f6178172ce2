package krttest

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/meshd/meshd/krt"
)

// Keys returns the keys of c's items, in order.
func Keys[T any](c krt.Collection[T]) []string {
	items := c.List()
	keys := make([]string, len(items))
	for i, v := range items {
		keys[i] = krt.KeyOf(c, v)
	}
	return keys
}

// ExpectKeys fails t unless c holds exactly the items with keys want, in
// any order.
func ExpectKeys[T any](t testing.TB, c krt.Collection[T], want ...string) {
	t.Helper()
	got := Keys(c)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Fatalf("%s holds keys %q, want %q", c.Name(), got, want)
	}
}

// ExpectList fails t unless c holds exactly want, compared item by item
// with reflect.DeepEqual; the failure names each key that differs.
func ExpectList[T any](t testing.TB, c krt.Collection[T], want ...T) {
	t.Helper()
	byKey := make(map[string]T, len(want))
	for _, v := range want {
		byKey[krt.KeyOf(c, v)] = v
	}
	var diffs []string
	for _, v := range c.List() {
		k := krt.KeyOf(c, v)
		w, ok := byKey[k]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("unexpected %s: %+v", k, v))
		case !reflect.DeepEqual(v, w):
			diffs = append(diffs, fmt.Sprintf("%s is %+v, want %+v", k, v, w))
		}
		delete(byKey, k)
	}
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		diffs = append(diffs, fmt.Sprintf("missing %s: want %+v", k, byKey[k]))
	}
	if len(diffs) > 0 {
		t.Fatalf("%s:\n\t%s", c.Name(), strings.Join(diffs, "\n\t"))
	}
}
