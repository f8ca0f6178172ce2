package xds_test

import (
	"slices"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest"
)

// scoped is a cluster with the namespaces it is exported to (nil: all;
// "." its own), or hidden from (Except).
type scoped struct {
	Name, Namespace string
	ExportTo        []string
	Except          []string
}

func (s scoped) ResourceName() string { return s.Name }

func (s scoped) visibility() xds.Visibility {
	if s.Except != nil {
		return xds.VisibleToAllExcept(s.Except...)
	}
	if s.ExportTo == nil || slices.Contains(s.ExportTo, "*") {
		return xds.VisibleToAll()
	}
	var ns []string
	for _, e := range s.ExportTo {
		if e == "." {
			e = s.Namespace
		}
		ns = append(ns, e)
	}
	return xds.VisibleTo(ns...)
}

// scopedFixture serves a cluster and a load assignment per scoped item.
type scopedFixture struct {
	items krt.Static[scoped]
	srv   *xds.Server
	addr  string
}

func newScopedFixture(t *testing.T, items []scoped, opts ...xds.Option) *scopedFixture {
	t.Helper()
	g := krt.NewGraph()
	f := &scopedFixture{items: krt.NewStatic[scoped](g, krt.WithName("scoped"))}
	vis := xds.WithVisibility(scoped.visibility)
	f.srv = xds.New(g, []xds.Source{
		xds.NewSource(xds.ClusterType, f.items, func(s scoped) (string, proto.Message) { return s.Name, edsCluster(s.Name) }, vis),
		xds.NewSource(xds.EndpointType, f.items, func(s scoped) (string, proto.Message) { return s.Name, cla(s.Name, "127.0.0.1:80") }, vis),
	}, append([]xds.Option{xds.WithDebounce(0)}, opts...)...)
	f.items.Set(items...)
	f.addr = serve(t, g, f.srv)
	return f
}

// nodeIn returns a node whose metadata places it in namespace ns ("": none).
func nodeIn(t *testing.T, id, ns string) *corev3.Node {
	n := &corev3.Node{Id: id}
	if ns != "" {
		md, err := structpb.NewStruct(map[string]any{xds.NamespaceMetadataKey: ns})
		if err != nil {
			t.Fatal(err)
		}
		n.Metadata = md
	}
	return n
}

var scopedItems = []scoped{
	{Name: "pub.a", Namespace: "a"},
	{Name: "priv.a", Namespace: "a", ExportTo: []string{"."}},
	{Name: "shared.a", Namespace: "a", ExportTo: []string{".", "c"}},
	{Name: "pub.b", Namespace: "b", ExportTo: []string{"*"}},
	// A resource namespace a has a variant of: every other proxy's.
	{Name: "rest.a", Namespace: "a", Except: []string{"a"}},
}

func TestNamespaceIsolation(t *testing.T) {
	all := []string{"priv.a", "pub.a", "pub.b", "rest.a", "shared.a"}
	tests := []struct {
		name      string
		isolation bool
		ns        string
		want      []string // of every name, sorted
	}{
		{"off, proxy in a", false, "a", all},
		{"off, proxy in b", false, "b", all},
		{"off, no namespace", false, "", all},
		{"on, proxy in a", true, "a", []string{"priv.a", "pub.a", "pub.b", "shared.a"}},
		{"on, proxy in b", true, "b", []string{"pub.a", "pub.b", "rest.a"}},
		{"on, proxy in c", true, "c", []string{"pub.a", "pub.b", "rest.a", "shared.a"}},
		{"on, no namespace", true, "", []string{"pub.a", "pub.b", "rest.a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []xds.Option
			if tt.isolation {
				opts = append(opts, xds.WithNamespaceIsolation(nil))
			}
			f := newScopedFixture(t, scopedItems, opts...)
			cc := dial(t, f.addr)
			hidden := 0
			for _, n := range all {
				if !slices.Contains(tt.want, n) {
					hidden++
				}
			}

			checkIsolatedSotW(t, cc, tt.ns, all, tt.want)
			checkIsolatedDelta(t, cc, tt.ns, all, tt.want)

			// Denied: the names asked for explicitly (SotW EDS, SotW CDS,
			// Delta EDS) that were hidden.
			st := f.srv.Stats()
			if got, want := st.Denied["eds"]+st.Denied["cds"], uint64(3*hidden); got != want {
				t.Errorf("Stats.Denied = %v, want %d in all", st.Denied, want)
			}
		})
	}
}

// TestNamespaceIsolationChange checks that a resource whose visibility
// narrows is removed from the proxies that may no longer see it, and sent
// to them again once it widens.
func TestNamespaceIsolationChange(t *testing.T) {
	f := newScopedFixture(t, []scoped{{Name: "svc.a", Namespace: "a"}}, xds.WithNamespaceIsolation(nil))
	cc := dial(t, f.addr)

	type proxy struct {
		s *xdstest.SotW
		d *xdstest.Delta
	}
	start := func(ns string) proxy {
		p := proxy{s: xdstest.NewSotW(t, cc, nodeIn(t, "s-"+ns, ns)), d: xdstest.NewDelta(t, cc, nodeIn(t, "d-"+ns, ns))}
		p.s.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType})
		if got := names(t, p.s.Recv()); !slices.Equal(got, []string{"svc.a"}) {
			t.Fatalf("%s SotW: %v", ns, got)
		}
		p.d.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.ClusterType, ResourceNamesSubscribe: []string{"svc.a"}})
		if got := deltaNames(t, p.d.Recv()); !slices.Equal(got, []string{"svc.a"}) {
			t.Fatalf("%s Delta: %v", ns, got)
		}
		return p
	}
	a, b := start("a"), start("b")

	// Narrowed to its own namespace: b loses it, a keeps it and is sent
	// nothing, since its bytes did not change.
	f.items.Set(scoped{Name: "svc.a", Namespace: "a", ExportTo: []string{"."}})
	if got := b.s.Recv(); len(got.Resources) != 0 {
		t.Errorf("b SotW after narrowing: %v, want none", names(t, got))
	}
	if got := b.d.Recv(); !slices.Equal(got.RemovedResources, []string{"svc.a"}) || len(got.Resources) != 0 {
		t.Errorf("b Delta after narrowing: resources %v removed %v, want removed [svc.a]", deltaNames(t, got), got.RemovedResources)
	}

	// Widened again: b gets it back; a, which held it all along, still
	// gets nothing, which the next change shows.
	f.items.Set(scoped{Name: "svc.a", Namespace: "a", ExportTo: []string{"a", "b"}})
	if got := names(t, b.s.Recv()); !slices.Equal(got, []string{"svc.a"}) {
		t.Errorf("b SotW after widening: %v", got)
	}
	if got := b.d.Recv(); !slices.Equal(deltaNames(t, got), []string{"svc.a"}) {
		t.Errorf("b Delta after widening: %v", deltaNames(t, got))
	}
	f.items.Delete("svc.a")
	for _, p := range []proxy{a, b} {
		if got := p.s.Recv(); len(got.Resources) != 0 {
			t.Errorf("SotW after delete: %v", names(t, got))
		}
		if got := p.d.Recv(); !slices.Equal(got.RemovedResources, []string{"svc.a"}) {
			t.Errorf("Delta after delete: removed %v", got.RemovedResources)
		}
	}
}

func TestNodeNamespace(t *testing.T) {
	md, err := structpb.NewStruct(map[string]any{"NAMESPACE": "meta"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		node   *corev3.Node
		want   string
		wantOK bool
	}{
		{"nil", nil, "", false},
		{"metadata", &corev3.Node{Id: "x", Metadata: md}, "meta", true},
		{"metadata wins over id", &corev3.Node{Id: "sidecar~10.0.0.1~pod.idns~idns.svc.cluster.local", Metadata: md}, "meta", true},
		{"istio id", &corev3.Node{Id: "sidecar~10.0.0.1~pod-7f.shop~shop.svc.cluster.local"}, "shop", true},
		{"istio id without dot", &corev3.Node{Id: "sidecar~10.0.0.1~pod~shop.svc.cluster.local"}, "", false},
		{"plain id", &corev3.Node{Id: "client.shop"}, "", false},
		{"empty", &corev3.Node{}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := xds.NodeNamespace(tt.node)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("NodeNamespace = %q, %v; want %q, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestVisibility(t *testing.T) {
	tests := []struct {
		name  string
		v     xds.Visibility
		allow []string
		deny  []string
		str   string
	}{
		{"all", xds.VisibleToAll(), []string{"a", "b", ""}, nil, "*"},
		{"listed", xds.VisibleTo("b", "a", "b"), []string{"a", "b"}, []string{"c", ""}, "a,b"},
		{"none", xds.VisibleTo(), nil, []string{"a", ""}, ""},
		{"all except", xds.VisibleToAllExcept("b", "a"), []string{"c", ""}, []string{"a", "b"}, "*,-a,-b"},
		{"all except none", xds.VisibleToAllExcept(), []string{"a", ""}, nil, "*"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, ns := range tt.allow {
				if !tt.v.Allows(ns) {
					t.Errorf("Allows(%q) = false", ns)
				}
			}
			for _, ns := range tt.deny {
				if tt.v.Allows(ns) {
					t.Errorf("Allows(%q) = true", ns)
				}
			}
			if got := tt.v.String(); got != tt.str {
				t.Errorf("String = %q, want %q", got, tt.str)
			}
		})
	}
	if !xds.VisibleTo("a", "b").Equal(xds.VisibleTo("b", "a")) || xds.VisibleTo().Equal(xds.VisibleToAll()) ||
		xds.VisibleTo("a").Equal(xds.VisibleToAllExcept("a")) {
		t.Error("Equal")
	}
}

// checkNames reports what got when its names, in any order, are not want.
func checkNames(t *testing.T, what string, got, want []string) {
	t.Helper()
	if got := sorted(got); !slices.Equal(got, want) {
		t.Errorf("%s: %v, want %v", what, got, want)
	}
}

// checkIsolatedSotW: a SotW proxy in ns sees exactly want of all, through
// wildcard and named requests; Clusters carry the full state.
func checkIsolatedSotW(t *testing.T, cc grpc.ClientConnInterface, ns string, all, want []string) {
	t.Helper()
	s := xdstest.NewSotW(t, cc, nodeIn(t, "sotw", ns))
	s.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType})
	checkNames(t, "SotW wildcard CDS", names(t, s.Recv()), want)
	s.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: all})
	checkNames(t, "SotW named EDS", names(t, s.Recv()), want)
	named := xdstest.NewSotW(t, cc, nodeIn(t, "sotw-named", ns))
	named.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType, ResourceNames: all})
	checkNames(t, "SotW named CDS", names(t, named.Recv()), want)
}

// checkIsolatedDelta: a Delta proxy in ns sees exactly want of all,
// through wildcard and named subscriptions, and is told of no removals.
func checkIsolatedDelta(t *testing.T, cc grpc.ClientConnInterface, ns string, all, want []string) {
	t.Helper()
	d := xdstest.NewDelta(t, cc, nodeIn(t, "delta", ns))
	d.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.ClusterType})
	checkNames(t, "Delta wildcard CDS", deltaNames(t, d.Recv()), want)
	d.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNamesSubscribe: all})
	r := d.Recv()
	checkNames(t, "Delta named EDS", deltaNames(t, r), want)
	if len(r.RemovedResources) != 0 {
		t.Errorf("Delta named EDS removed %v, want none", r.RemovedResources)
	}
}
