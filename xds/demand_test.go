package xds_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/proto"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest"
)

// demandFixture serves clusters built only while a stream names them:
// the cluster source derives "od-<x>" from the demanded names that start
// with "od-".
type demandFixture struct {
	g      *krt.Graph
	demand *xds.Demand
	addr   string
}

func newDemandFixture(t *testing.T) *demandFixture {
	t.Helper()
	g := krt.NewGraph()
	rs := newResources(g)
	d := xds.NewDemand(g, "demanded-clusters", func(n string) bool { return strings.HasPrefix(n, "od-") })
	built := krt.NewCollection(g, d.Names(), func(_ krt.HandlerContext, n string) **clusterv3.Cluster {
		c := edsCluster(n)
		return &c
	}, krt.WithKey(func(c *clusterv3.Cluster) string { return c.GetName() }),
		krt.WithEquals(func(a, b *clusterv3.Cluster) bool { return proto.Equal(a, b) }))
	clusters := krt.Join(g, []krt.Collection[*clusterv3.Cluster]{rs.cds, built},
		krt.WithKey(func(c *clusterv3.Cluster) string { return c.GetName() }))
	srcs := rs.sources()
	srcs[2] = xds.NewSource(xds.ClusterType, clusters, func(c *clusterv3.Cluster) (string, proto.Message) { return c.GetName(), c },
		xds.WithNamedOnly(func(c *clusterv3.Cluster) bool { return strings.HasPrefix(c.GetName(), "od-") }),
		xds.WithDemand[*clusterv3.Cluster](d))
	rs.cds.Set(edsCluster("plain"))
	srv := xds.New(g, srcs, xds.WithDebounce(0))
	return &demandFixture{g: g, demand: d, addr: serve(t, g, srv)}
}

// awaitDemand waits until the demanded names are want.
func (f *demandFixture) awaitDemand(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := slices.Clone(f.demand.Names().List())
		slices.Sort(got)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("demanded names %v, want %v", got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// clusterNames returns the names of the clusters of a response.
func clusterNames(t *testing.T, r *discovery.DiscoveryResponse) []string {
	t.Helper()
	var out []string
	for _, a := range r.Resources {
		c := &clusterv3.Cluster{}
		if err := a.UnmarshalTo(c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c.GetName())
	}
	slices.Sort(out)
	return out
}

// TestDemandBuildsNamedResources names, on SotW streams, clusters that
// exist only while asked for: the first stream naming one makes it
// demanded, it is then built and pushed; names no stream asks for, or
// that the Demand does not match, are not demanded; a wildcard stream
// demands nothing; and a name leaves the demand with the last stream
// naming it.
func TestDemandBuildsNamedResources(t *testing.T) {
	f := newDemandFixture(t)
	wild := xdstest.NewSotW(t, dial(t, f.addr), &corev3.Node{Id: "wild"})
	wild.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType})
	if got := clusterNames(t, wild.Recv()); !slices.Equal(got, []string{"plain"}) {
		t.Fatalf("wildcard got %v, want [plain]", got)
	}
	f.awaitDemand(t)

	a := xdstest.NewSotW(t, dial(t, f.addr), &corev3.Node{Id: "a"})
	a.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType, ResourceNames: []string{"od-x", "plain", "other"}})
	f.awaitDemand(t, "od-x")
	for {
		r := a.Recv()
		got := clusterNames(t, r)
		a.Ack(r, "od-x", "plain", "other")
		if slices.Equal(got, []string{"od-x", "plain"}) {
			break
		}
	}
	b := xdstest.NewSotW(t, dial(t, f.addr), &corev3.Node{Id: "b"})
	b.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType, ResourceNames: []string{"od-x", "od-y"}})
	f.awaitDemand(t, "od-x", "od-y")

	// a drops od-x, which b still names; once a has its answer, od-x
	// is still demanded. Then b ends and takes both names with it.
	a.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType, ResourceNames: []string{"plain"}})
	for !slices.Equal(clusterNames(t, a.Recv()), []string{"plain"}) {
	}
	f.awaitDemand(t, "od-x", "od-y")
	b.Close()
	f.awaitDemand(t)
}
