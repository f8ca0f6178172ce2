package krt_test

import (
	"errors"
	"testing"

	"github.com/meshd/meshd/krt"
)

// routeStatus is what a route transformation says about its input.
type routeStatus struct {
	Accepted bool
	Reason   string
}

func TestStatusCollectionKeepsOutputAndStatusTogether(t *testing.T) {
	g, routes := newStatic[Num](krt.WithName("routes"))
	statuses, outs := krt.NewStatusCollection(g, routes, func(ctx krt.HandlerContext, r Num) (*routeStatus, *Num) {
		switch {
		case r.N < 0:
			return &routeStatus{Reason: "negative weight"}, nil
		case r.N == 99:
			ctx.Fail(errors.New("backend lookup failed"))
			return nil, nil
		}
		return &routeStatus{Accepted: true}, &Num{Key: "out-" + r.Key, N: r.N}
	}, krt.WithName("compiled"))
	routes.Set(Num{"a", 1}, Num{"b", -1})
	if st, ok := statuses.Get("a"); !ok || !st.Status.Accepted {
		t.Fatalf("a: status %+v %v", st, ok)
	}
	if st, _ := statuses.Get("b"); st.Status.Accepted || st.Status.Reason != "negative weight" {
		t.Fatalf("b: status %+v", st)
	}
	if o, ok := outs.Get("out-a"); !ok || o.N != 1 || outs.Len() != 1 {
		t.Fatalf("outputs %v", outs.List())
	}
	// A failure keeps both the last good output and status.
	routes.Set(Num{"a", 99})
	if st, _ := statuses.Get("a"); !st.Status.Accepted {
		t.Fatalf("a after failure: status %+v", st)
	}
	if o, _ := outs.Get("out-a"); o.N != 1 {
		t.Fatalf("a after failure: output %v", o)
	}
	routes.Delete("a", "b")
	if statuses.Len() != 0 || outs.Len() != 0 {
		t.Fatalf("after delete: statuses %v outputs %v", statuses.List(), outs.List())
	}
	if statuses.Name() != "compiled/status" || outs.Name() != "compiled" {
		t.Fatalf("names %q %q", statuses.Name(), outs.Name())
	}
}

// TestStatusManyCollection: one input gives several outputs and one
// status; a change of the input replaces all of its outputs.
func TestStatusManyCollection(t *testing.T) {
	g, in := newStatic[Num](krt.WithName("in"))
	statuses, outs := krt.NewStatusManyCollection(g, in, func(ctx krt.HandlerContext, n Num) (*routeStatus, []Num) {
		var out []Num
		for i := range n.N {
			out = append(out, Num{Key: n.Key + "-" + string(rune('0'+i)), N: i})
		}
		return &routeStatus{Accepted: n.N > 0}, out
	}, krt.WithName("split"))
	in.Set(Num{"a", 3})
	if st, ok := statuses.Get("a"); !ok || !st.Status.Accepted || outs.Len() != 3 {
		t.Fatalf("a=3: status %+v %v, outputs %v", st, ok, outs.List())
	}
	in.Set(Num{"a", 0})
	if st, ok := statuses.Get("a"); !ok || st.Status.Accepted || outs.Len() != 0 {
		t.Fatalf("a=0: status %+v %v, outputs %v", st, ok, outs.List())
	}
}
