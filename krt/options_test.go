package krt_test

import (
	"testing"

	"github.com/meshd/meshd/krt"
)

// Named is an interface item type: its accessors come from the dynamic
// type's methods.
type Named interface {
	ResourceName() string
	GetNamespace() string
}

func TestInterfaceItemType(t *testing.T) {
	g := krt.NewGraph()
	in := krt.NewStatic[Named](g)
	in.Set(Pod{Name: "a", Namespace: "x"}, Service{Name: "b", Namespace: "y"})
	got := fetchKeysAny(g, in, krt.FilterNamespace("y"))
	if len(got) != 1 || got[0] != "y/b" {
		t.Fatalf("got %v", got)
	}
}

func fetchKeysAny(g *krt.Graph, c krt.Collection[Named], filters ...krt.Filter) []string {
	type keys struct{ K []string }
	s := krt.NewSingleton(g, func(ctx krt.HandlerContext) *keys {
		out := &keys{}
		for _, v := range krt.Fetch(ctx, c, filters...) {
			out.K = append(out.K, v.ResourceName())
		}
		return out
	})
	v, _ := s.Value()
	return v.K
}

func TestMissingKeyPanicsAtConstruction(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for an item type without a key")
		}
	}()
	krt.NewStatic[struct{ A int }](krt.NewGraph())
}
