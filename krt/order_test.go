package krt_test

import (
	"strings"
	"testing"

	"github.com/meshd/meshd/krt"
)

// A transformation may fetch a collection created after its own; the
// transaction still converges to the from-scratch result.
func TestFetchOfLaterCollectionConverges(t *testing.T) {
	g, in := newStatic[Num]()
	var later krt.Collection[Num]
	early := krt.NewCollection(g, in, func(ctx krt.HandlerContext, n Num) *Num {
		if later == nil {
			return &n
		}
		total := 0
		for _, m := range krt.Fetch(ctx, later) {
			total += m.N
		}
		return &Num{Key: n.Key, N: total}
	})
	other := krt.NewStatic[Num](g)
	later = krt.NewCollection(g, other, func(ctx krt.HandlerContext, n Num) *Num { return &n })
	in.Set(Num{"a", 0})
	other.Set(Num{"x", 5})
	if got, _ := early.Get("a"); got.N != 5 {
		t.Fatalf("early = %v, want 5", got)
	}
}

// A genuine cycle is cut and reported instead of spinning forever.
func TestCycleIsReported(t *testing.T) {
	g, in := newStatic[Num]()
	var b krt.Collection[Num]
	a := krt.NewCollection(g, in, func(ctx krt.HandlerContext, n Num) *Num {
		if b != nil {
			for _, m := range krt.Fetch(ctx, b) {
				n.N += m.N
			}
		}
		return &n
	}, krt.WithName("a"))
	b = krt.NewCollection(g, a, func(ctx krt.HandlerContext, n Num) *Num {
		return &Num{Key: n.Key, N: n.N + 1}
	}, krt.WithName("b"))
	in.Set(Num{"k", 1}) // a reads b reads a: every pass changes both
	in.Set(Num{"k", 2})
	found := false
	for _, c := range g.Describe().Collections {
		for _, e := range c.RecentErrors {
			if strings.Contains(e.Error, "dependency cycle") {
				found = true
			}
		}
	}
	if !found {
		t.Fatal("cycle not reported")
	}
}
