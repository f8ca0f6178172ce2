package xds_test

import (
	"slices"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"

	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest"
)

// TestDeltaProtocol walks incremental streams over real gRPC through
// subscription, change, removal, NACK, unsubscription and reconnection
// with known versions, in that order: each step relies on the state the
// previous one left.
func TestDeltaProtocol(t *testing.T) {
	f := newWalkFixture(t)
	cc := dial(t, f.addr)
	d := &deltaWalk{t: t, f: f, c: xdstest.NewDelta(t, cc, &corev3.Node{Id: "node-1"}), versions: map[string]string{}}

	d.subscribe()
	d.changesAndRemovals()
	d.nackHoldsUntilChange()
	d.unsubscribe()
	d.reconnect(cc)

	var kinds []xds.StreamKind
	for _, p := range f.srv.Proxies() {
		kinds = append(kinds, p.Kind)
	}
	if len(kinds) != 3 || kinds[0] != xds.Delta {
		t.Fatalf("proxies kinds = %v", kinds)
	}
}

// deltaWalk is the state TestDeltaProtocol carries from step to step.
type deltaWalk struct {
	t *testing.T
	f *fixture
	c *xdstest.Delta
	// versions is the last version the client holds of each CLA.
	versions map[string]string
	// firstA is the version of CLA a as first sent.
	firstA string
}

// recvNames receives one response and checks the names it carries.
func (d *deltaWalk) recvNames(what string, want ...string) *discovery.DeltaDiscoveryResponse {
	d.t.Helper()
	return recvNames(d.t, d.c.Recv, deltaNames, what, want...)
}

// subscribe opens legacy wildcard CDS and named EDS.
func (d *deltaWalk) subscribe() {
	d.c.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.ClusterType})
	d.c.Ack(d.recvNames("CDS", "a", "b"))
	d.c.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNamesSubscribe: []string{"a", "b"}})
	eds := d.recvNames("EDS", "a", "b")
	for _, r := range eds.Resources {
		d.versions[r.Name] = r.Version
	}
	d.firstA = d.versions["a"]
	d.c.Ack(eds)
}

// changesAndRemovals: only the changed resource is sent, an unsubscribed
// change is not, and a removal is named in removed_resources.
func (d *deltaWalk) changesAndRemovals() {
	t := d.t
	d.f.eds.Set(cla("c", "10.0.0.33:80"))
	d.f.eds.Set(cla("a", "10.0.0.11:80"))
	eds := d.c.Recv()
	if got := deltaNames(t, eds); !slices.Equal(got, []string{"a"}) || len(eds.RemovedResources) != 0 {
		t.Fatalf("EDS = %v removed %v, want [a]", got, eds.RemovedResources)
	}
	d.versions["a"] = eds.Resources[0].Version
	d.c.Ack(eds)

	d.f.eds.Delete("b")
	eds = d.c.Recv()
	if len(eds.Resources) != 0 || !slices.Equal(eds.RemovedResources, []string{"b"}) {
		t.Fatalf("EDS = %v removed %v, want removed [b]", deltaNames(t, eds), eds.RemovedResources)
	}
	d.c.Ack(eds)
	d.f.cds.Delete("b")
	cds := d.c.Recv()
	if !slices.Equal(cds.RemovedResources, []string{"b"}) {
		t.Fatalf("CDS removed %v, want [b]", cds.RemovedResources)
	}
	d.c.Ack(cds)
}

// nackHoldsUntilChange: a NACKed change to a is not sent again until it
// changes, and the registry keeps the reason.
func (d *deltaWalk) nackHoldsUntilChange() {
	t := d.t
	d.f.eds.Set(cla("a", "10.0.0.111:80"))
	eds := d.c.Recv()
	d.c.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.EndpointType, ResponseNonce: eds.Nonce,
		ErrorDetail: &status.Status{Code: 3, Message: "bad endpoint"}})
	waitFor(t, "the NACK", func() bool { return proxyByNode(t, d.f.srv, "node-1").Types[xds.EndpointType].LastNack != nil })
	if ts := proxyByNode(t, d.f.srv, "node-1").Types[xds.EndpointType]; ts.LastNack.Message != "bad endpoint" || !slices.Equal(ts.Rejected, []string{"a"}) {
		t.Fatalf("registry EDS = %+v", ts)
	}
	// Subscribing c answers with c only: the rejected a is not resent.
	d.c.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNamesSubscribe: []string{"c"}})
	d.c.Ack(d.recvNames("EDS", "c"))
	// A new version of a is sent.
	d.f.eds.Set(cla("a", "10.0.0.1:80"))
	eds = d.recvNames("EDS", "a")
	if eds.Resources[0].Version != d.firstA {
		t.Fatalf("EDS a version %q, want %q: the version is the hash of the bytes", eds.Resources[0].Version, d.firstA)
	}
	d.versions["a"] = eds.Resources[0].Version
	d.c.Ack(eds)
}

// unsubscribe a: its changes are no longer sent.
func (d *deltaWalk) unsubscribe() {
	d.c.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNamesUnsubscribe: []string{"a"}})
	waitFor(d.t, "the unsubscription", func() bool {
		return slices.Equal(proxyByNode(d.t, d.f.srv, "node-1").Types[xds.EndpointType].Subscribed, []string{"b", "c"})
	})
	d.f.eds.Set(cla("a", "10.0.0.5:80"))
	d.f.eds.Set(cla("c", "10.0.0.3:80"))
	eds := d.recvNames("EDS", "c")
	d.versions["c"] = eds.Resources[0].Version
	d.c.Ack(eds)
}

// reconnect with known versions: c is current, a is stale, b is gone. A
// second reconnect that knows everything current gets nothing for the
// type: its CDS request is answered first.
func (d *deltaWalk) reconnect(cc grpc.ClientConnInterface) {
	t := d.t
	r := xdstest.NewDelta(t, cc, &corev3.Node{Id: "node-1"})
	r.Send(&discovery.DeltaDiscoveryRequest{
		TypeUrl:                 xds.EndpointType,
		ResourceNamesSubscribe:  []string{"a", "b", "c"},
		InitialResourceVersions: map[string]string{"a": d.versions["a"], "b": "old", "c": d.versions["c"]},
	})
	eds := r.Recv()
	if got := deltaNames(t, eds); !slices.Equal(got, []string{"a"}) || !slices.Equal(eds.RemovedResources, []string{"b"}) {
		t.Fatalf("EDS on reconnect = %v removed %v, want [a] removed [b]", got, eds.RemovedResources)
	}
	r.Ack(eds)
	r2 := xdstest.NewDelta(t, cc, &corev3.Node{Id: "node-2"})
	r2.Send(&discovery.DeltaDiscoveryRequest{
		TypeUrl:                 xds.EndpointType,
		ResourceNamesSubscribe:  []string{"a", "c"},
		InitialResourceVersions: map[string]string{"a": eds.Resources[0].Version, "c": d.versions["c"]},
	})
	r2.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.ClusterType})
	if got := r2.Recv(); got.TypeUrl != xds.ClusterType || !slices.Equal(deltaNames(t, got), []string{"a"}) {
		t.Fatalf("got %s %v, want CDS [a]", got.TypeUrl, deltaNames(t, got))
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
