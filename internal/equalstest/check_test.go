package equalstest

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that keeps the errors Check reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

type point struct{ X, Y int }

type item struct {
	Name   string
	Ready  bool
	Weight float64
	Labels map[string]string
	Points []point
	Stamp  time.Time
	Next   *point
	Any    any
	Pair   [2]uint8
}

func (a item) equalsAll(b item) bool {
	return a.Name == b.Name && a.Ready == b.Ready && a.Weight == b.Weight &&
		maps.Equal(a.Labels, b.Labels) && slices.Equal(a.Points, b.Points) &&
		a.Stamp.Equal(b.Stamp) && (a.Next == nil) == (b.Next == nil) &&
		(a.Next == nil || *a.Next == *b.Next) && a.Any == b.Any && a.Pair == b.Pair
}

// The types under test: item with Equals right, and wrong in several ways.
type (
	good        item
	noReady     item
	valuesOnly  item // compares the labels' values, not their keys
	firstPoint  item // compares the points' X only
	noStamp     item
	pointerOnly item // compares Next by address
)

func (a good) Equals(b good) bool { return item(a).equalsAll(item(b)) }
func (a noReady) Equals(b noReady) bool {
	b.Ready = a.Ready
	return item(a).equalsAll(item(b))
}
func (a valuesOnly) Equals(b valuesOnly) bool {
	av, bv := slices.Sorted(maps.Values(a.Labels)), slices.Sorted(maps.Values(b.Labels))
	b.Labels = a.Labels
	return slices.Equal(av, bv) && item(a).equalsAll(item(b))
}
func (a firstPoint) Equals(b firstPoint) bool {
	xs := func(ps []point) (out []int) {
		for _, p := range ps {
			out = append(out, p.X)
		}
		return out
	}
	same := slices.Equal(xs(a.Points), xs(b.Points))
	b.Points = a.Points
	return same && item(a).equalsAll(item(b))
}
func (a noStamp) Equals(b noStamp) bool {
	b.Stamp = a.Stamp
	return item(a).equalsAll(item(b))
}
func (a pointerOnly) Equals(b pointerOnly) bool {
	same := a.Next == b.Next
	b.Next = a.Next
	return same && item(a).equalsAll(item(b))
}

func full() item {
	return item{
		Name: "a", Ready: true, Weight: 0.5,
		Labels: map[string]string{"app": "web", "tier": "front"},
		Points: []point{{1, 2}, {3, 4}},
		Stamp:  time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		Next:   &point{5, 6},
		Any:    "x",
		Pair:   [2]uint8{7, 8},
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		run  func(testing.TB)
		want []string // substrings of the errors, one each, in order
	}{
		{"all fields compared", func(tb testing.TB) { Check(tb, good(full())) }, nil},
		{"a missed bool", func(tb testing.TB) { Check(tb, noReady(full())) }, []string{"misses a change to .Ready"}},
		{"map keys ignored", func(tb testing.TB) { Check(tb, valuesOnly(full())) }, []string{"Labels[app] (key changed)", "Labels[tier] (key changed)"}},
		{"a field of slice elements", func(tb testing.TB) { Check(tb, firstPoint(full())) }, []string{".Points[0].Y", ".Points[1].Y"}},
		{"an opaque struct", func(tb testing.TB) { Check(tb, noStamp(full())) }, []string{"misses a change to .Stamp"}},
		{"a pointer by address", func(tb testing.TB) { Check(tb, pointerOnly(full())) }, []string{"does not Equals a deep copy"}},
		{"zero leaves", func(tb testing.TB) { Check(tb, good{Name: "a", Labels: map[string]string{}}) },
			[]string{".Ready is zero", ".Weight is zero", ".Labels is zero", ".Points is zero", ".Stamp is zero", ".Next is zero", ".Any is zero", ".Pair[0] is zero", ".Pair[1] is zero"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{TB: t}
			tc.run(r)
			if len(r.errs) != len(tc.want) {
				t.Fatalf("errors:\n%s\nwant %d, containing %q", strings.Join(r.errs, "\n"), len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(r.errs[i], w) {
					t.Errorf("error %d = %q, want it to contain %q", i, r.errs[i], w)
				}
			}
		})
	}
}

// TestVariantsLeaveOriginal: building the variants modifies nothing of the
// original, whose maps, slices and pointee are shared with them.
func TestVariantsLeaveOriginal(t *testing.T) {
	v := full()
	n := 0
	for range variants(v) {
		n++
	}
	if !item(v).equalsAll(full()) {
		t.Errorf("after %d variants the original is %+v, want %+v", n, v, full())
	}
	if c := deepCopy(reflect.ValueOf(v)).Interface().(item); c.Next == v.Next || &c.Points[0] == &v.Points[0] {
		t.Error("the deep copy shares a pointer or a slice with the original")
	}
	if n < 20 {
		t.Errorf("%d variants of a 9-field value, want one per leaf and more", n)
	}
}
