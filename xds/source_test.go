package xds

import (
	"errors"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/meshd/meshd/krt"
)

// packedItem is an item holding its resource serialized.
type packedItem struct {
	name   string
	packed *anypb.Any
}

// TestPackedSourceSharesBytes checks that a packed source's resources
// are the items' own Anys, not copies, versioned as NewSource versions
// the same message; that a nil Any is skipped; and that an Any of another
// type is a failed computation, not a resource.
func TestPackedSourceSharesBytes(t *testing.T) {
	msg := &clusterv3.Cluster{Name: "a", ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS}}
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	a := &anypb.Any{TypeUrl: ClusterType, Value: raw}
	g := krt.NewGraph()
	items := krt.NewStatic[packedItem](g, krt.WithName("packed"), krt.WithKey(func(p packedItem) string { return p.name }))
	items.Set(packedItem{name: "a", packed: a}, packedItem{name: "none"},
		packedItem{name: "wrong", packed: &anypb.Any{TypeUrl: EndpointType, Value: raw}})
	src := NewPackedSource(ClusterType, items, func(p packedItem) (string, *anypb.Any) { return p.name, p.packed })
	entries := src.entries(g)
	got := entries.List()
	if len(got) != 1 || got[0].res.name != "a" {
		t.Fatalf("resources %v, want a alone", got)
	}
	r := got[0].res
	if r.any != a || &r.any.Value[0] != &raw[0] {
		t.Error("the resource copied the item's Any instead of sharing it")
	}
	want, err := newResource(ClusterType, "a", msg)
	if err != nil {
		t.Fatal(err)
	}
	if r.version != want.version || r.pair != want.pair || len(r.warms) != 1 || r.warms[0] != "a" {
		t.Errorf("packed resource version %s warms %v, marshalled %s warms %v", r.version, r.warms, want.version, want.warms)
	}
	if _, err := packedResource(ClusterType, "wrong", &anypb.Any{TypeUrl: EndpointType}); !errors.Is(err, ErrTypeMismatch) {
		t.Errorf("an Any of another type: %v, want ErrTypeMismatch", err)
	}
	failed := uint64(0)
	for _, c := range g.Describe().Collections {
		if c.Name == "xds/cds" {
			failed = c.Errors
		}
	}
	if failed == 0 {
		t.Error("xds/cds records no failed computation for the Any of another type")
	}
}
