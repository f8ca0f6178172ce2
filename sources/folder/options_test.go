package folder

import (
	"testing"
	"testing/fstest"

	"github.com/meshd/meshd/sources/internal/testcrd"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
)

// A namespaced object written without a namespace lands in the namespace
// WithDefaultNamespace names, instead of "default".
func TestWithDefaultNamespace(t *testing.T) {
	fsys := fstest.MapFS{"pod.yaml": {Data: []byte(
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: x}]\n")}}
	for _, tc := range []struct {
		name string
		opts []Option
		want string
	}{
		{name: "default", want: "default/p"},
		{name: "shop", opts: []Option{WithDefaultNamespace("shop")}, want: "shop/p"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewFS(krt.NewGraph(), fsys, tc.opts...)
			if err := s.Load(); err != nil {
				t.Fatal(err)
			}
			if got := keysOf(s.Inputs().Pods, sources.Key); got != tc.want {
				t.Errorf("pods %q, want %q", got, tc.want)
			}
			if p := s.Problems(); len(p) != 0 {
				t.Errorf("problems %v", p)
			}
		})
	}
}

// The krt options WithCollectionOptions gives reach the kind's collection:
// here its name, which the graph then lists.
func TestWithCollectionOptions(t *testing.T) {
	g := krt.NewGraph()
	s := NewFS(g, fstest.MapFS{"w.yaml": {Data: []byte(
		"apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: shop}\nspec: {size: 3}\n")}})
	widgets := AddKind[*testcrd.Widget](s, schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"},
		WithCollectionOptions(krt.WithName("my-widgets")))
	if err := s.Load(); err != nil {
		t.Fatal(err)
	}
	if got := widgets.Name(); got != "my-widgets" {
		t.Errorf("collection name %q, want my-widgets", got)
	}
	if w, ok := widgets.Get("shop/w"); !ok || w.Spec.Size != 3 {
		t.Errorf("widget shop/w: %v, %v", w, ok)
	}
	var listed bool
	for _, c := range g.Describe().Collections {
		listed = listed || (c.Name == "my-widgets" && c.Size == 1)
	}
	if !listed {
		t.Errorf("graph does not list my-widgets with one item: %+v", g.Describe().Collections)
	}
}
