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
	g, in := newStatic[Named]()
	in.Set(Pod{Name: "a", Namespace: "x"}, Service{Name: "b", Namespace: "y"})
	got := fetchKeys(g, krt.Collection[Named](in), []krt.Filter{krt.FilterNamespace("y")})
	if len(got) != 1 || got[0] != "y/b" {
		t.Fatalf("got %v", got)
	}
}

func TestMissingKeyPanicsAtConstruction(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for an item type without a key")
		}
	}()
	krt.NewStatic[struct{ A int }](krt.NewGraph())
}
