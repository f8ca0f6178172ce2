package xds_test

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/meshd/meshd/xds/xdstest"
	"slices"
	"testing"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/genproto/googleapis/rpc/status"

	"github.com/meshd/meshd/xds"
)

func TestDeltaProtocol(t *testing.T) {
	f := newFixture(t)
	f.cds.Set(edsCluster("a"), edsCluster("b"))
	f.eds.Set(cla("a", "10.0.0.1:80"), cla("b", "10.0.0.2:80"), cla("c", "10.0.0.3:80"))
	cc := dial(t, f.addr)
	c := xdstest.NewDelta(t, cc, &corev3.Node{Id: "node-1"})

	// Legacy wildcard CDS, named EDS.
	c.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.ClusterType})
	cds := c.Recv()
	if got := deltaNames(t, cds); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("CDS = %v", got)
	}
	c.Ack(cds)
	c.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNamesSubscribe: []string{"a", "b"}})
	eds := c.Recv()
	if got := deltaNames(t, eds); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("EDS = %v", got)
	}
	versions := map[string]string{}
	for _, r := range eds.Resources {
		versions[r.Name] = r.Version
	}
	firstA := versions["a"]
	c.Ack(eds)

	// Only the changed resource is sent; an unsubscribed change is not.
	f.eds.Set(cla("c", "10.0.0.33:80"))
	f.eds.Set(cla("a", "10.0.0.11:80"))
	eds = c.Recv()
	if got := deltaNames(t, eds); !slices.Equal(got, []string{"a"}) || len(eds.RemovedResources) != 0 {
		t.Fatalf("EDS = %v removed %v, want [a]", got, eds.RemovedResources)
	}
	versions["a"] = eds.Resources[0].Version
	c.Ack(eds)

	// A removal is named in removed_resources.
	f.eds.Delete("b")
	eds = c.Recv()
	if len(eds.Resources) != 0 || !slices.Equal(eds.RemovedResources, []string{"b"}) {
		t.Fatalf("EDS = %v removed %v, want removed [b]", deltaNames(t, eds), eds.RemovedResources)
	}
	c.Ack(eds)
	f.cds.Delete("b")
	cds = c.Recv()
	if !slices.Equal(cds.RemovedResources, []string{"b"}) {
		t.Fatalf("CDS removed %v, want [b]", cds.RemovedResources)
	}
	c.Ack(cds)

	// NACK a change to a: it is not sent again until it changes, and the
	// registry keeps the reason.
	f.eds.Set(cla("a", "10.0.0.111:80"))
	eds = c.Recv()
	c.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.EndpointType, ResponseNonce: eds.Nonce,
		ErrorDetail: &status.Status{Code: 3, Message: "bad endpoint"}})
	waitFor(t, "the NACK", func() bool { return proxyByNode(t, f.srv, "node-1").Types[xds.EndpointType].LastNack != nil })
	if ts := proxyByNode(t, f.srv, "node-1").Types[xds.EndpointType]; ts.LastNack.Message != "bad endpoint" || !slices.Equal(ts.Rejected, []string{"a"}) {
		t.Fatalf("registry EDS = %+v", ts)
	}
	// Subscribing c answers with c only: the rejected a is not resent.
	c.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNamesSubscribe: []string{"c"}})
	eds = c.Recv()
	if got := deltaNames(t, eds); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("EDS = %v, want [c]", got)
	}
	c.Ack(eds)
	// A new version of a is sent.
	f.eds.Set(cla("a", "10.0.0.1:80"))
	eds = c.Recv()
	if got := deltaNames(t, eds); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("EDS = %v, want [a]", got)
	}
	if eds.Resources[0].Version != firstA {
		t.Fatalf("EDS a version %q, want %q: the version is the hash of the bytes", eds.Resources[0].Version, firstA)
	}
	versions["a"] = eds.Resources[0].Version
	c.Ack(eds)

	// Unsubscribe a: its changes are no longer sent.
	c.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNamesUnsubscribe: []string{"a"}})
	waitFor(t, "the unsubscription", func() bool {
		return slices.Equal(proxyByNode(t, f.srv, "node-1").Types[xds.EndpointType].Subscribed, []string{"b", "c"})
	})
	f.eds.Set(cla("a", "10.0.0.5:80"))
	f.eds.Set(cla("c", "10.0.0.3:80"))
	eds = c.Recv()
	if got := deltaNames(t, eds); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("EDS = %v, want [c]", got)
	}
	versions["c"] = eds.Resources[0].Version
	c.Ack(eds)

	// Reconnect with known versions: c is current, a is stale, b is gone.
	r := xdstest.NewDelta(t, cc, &corev3.Node{Id: "node-1"})
	r.Send(&discovery.DeltaDiscoveryRequest{
		TypeUrl:                 xds.EndpointType,
		ResourceNamesSubscribe:  []string{"a", "b", "c"},
		InitialResourceVersions: map[string]string{"a": versions["a"], "b": "old", "c": versions["c"]},
	})
	eds = r.Recv()
	if got := deltaNames(t, eds); !slices.Equal(got, []string{"a"}) || !slices.Equal(eds.RemovedResources, []string{"b"}) {
		t.Fatalf("EDS on reconnect = %v removed %v, want [a] removed [b]", got, eds.RemovedResources)
	}
	r.Ack(eds)
	// And a reconnect that knows everything current gets nothing for the
	// type: its CDS request is answered first.
	r2 := xdstest.NewDelta(t, cc, &corev3.Node{Id: "node-2"})
	r2.Send(&discovery.DeltaDiscoveryRequest{
		TypeUrl:                 xds.EndpointType,
		ResourceNamesSubscribe:  []string{"a", "c"},
		InitialResourceVersions: map[string]string{"a": eds.Resources[0].Version, "c": versions["c"]},
	})
	r2.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.ClusterType})
	if got := r2.Recv(); got.TypeUrl != xds.ClusterType || !slices.Equal(deltaNames(t, got), []string{"a"}) {
		t.Fatalf("got %s %v, want CDS [a]", got.TypeUrl, deltaNames(t, got))
	}

	var kinds []xds.StreamKind
	for _, p := range f.srv.Proxies() {
		kinds = append(kinds, p.Kind)
	}
	if len(kinds) != 3 || kinds[0] != xds.Delta {
		t.Fatalf("proxies kinds = %v", kinds)
	}
}

// TestDeltaWildcardSubscribe checks an explicit "*" subscription next to
// names, and unsubscribing the wildcard.
func TestDeltaWildcardSubscribe(t *testing.T) {
	f := newFixture(t)
	f.eds.Set(cla("a", "10.0.0.1:80"), cla("b", "10.0.0.2:80"))
	c := xdstest.NewDelta(t, dial(t, f.addr), &corev3.Node{Id: "node-1"})
	c.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNamesSubscribe: []string{"*", "a"}})
	eds := c.Recv()
	if got := deltaNames(t, eds); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("EDS = %v", got)
	}
	c.Ack(eds)
	f.eds.Set(cla("z", "10.0.0.26:80"))
	eds = c.Recv()
	if got := deltaNames(t, eds); !slices.Equal(got, []string{"z"}) {
		t.Fatalf("EDS = %v", got)
	}
	c.Ack(eds)
	// Dropping the wildcard keeps the named a only.
	c.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNamesUnsubscribe: []string{"*"}})
	waitFor(t, "the unsubscription", func() bool {
		return !proxyByNode(t, f.srv, "node-1").Types[xds.EndpointType].Wildcard
	})
	f.eds.Set(cla("b", "10.0.0.22:80"))
	f.eds.Set(cla("a", "10.0.0.11:80"))
	eds = c.Recv()
	if got := deltaNames(t, eds); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("EDS = %v, want [a]", got)
	}
	if got := proxyByNode(t, f.srv, "node-1").Types[xds.EndpointType].Resources; got != 1 {
		t.Fatalf("client holds %d resources, want 1", got)
	}
}
