package xds_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest"
)

// These tests run two servers as two replicas of meshd would: each with
// its own graph and cache, fed the same config through a different
// history, so that nothing but content is shared.

// replicaEndpoints are the endpoints of clusters c1, c2 and c3 in the
// config the replicas serve; changedEndpoints differ in c2's only.
var (
	replicaEndpoints = []string{"10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80"}
	changedEndpoints = []string{"10.0.0.1:80", "10.0.0.22:80", "10.0.0.3:80"}
)

// quietFor is how long a test waits to conclude that no response comes.
const quietFor = 300 * time.Millisecond

// applyConfig writes, in one transaction, clusters c1.. with the given
// endpoints, listener l1 and its route r1, and returns once f's server
// holds them. The transaction must change something.
func applyConfig(t testing.TB, f *fixture, eps []string) {
	t.Helper()
	v := f.g.Update(func(tx *krt.Txn) {
		for i, ep := range eps {
			name := fmt.Sprintf("c%d", i+1)
			f.cds.In(tx).Set(edsCluster(name))
			f.eds.In(tx).Set(cla(name, ep))
		}
		f.lds.In(tx).Set(apiListener("l1", "r1"))
		f.rds.In(tx).Set(weightedRoute("r1", "svc", []string{"c1", "c2"}, []uint32{1, 1}))
	})
	waitFor(t, "the server to hold the config", func() bool { return f.srv.Stats().CacheVersion >= v })
}

// newReplicas starts two servers and brings a to the config with
// endpoints epsA and b to the one with epsB. b gets there through other
// versions of every resource and a cluster since removed, so that the
// graphs' version counters differ.
func newReplicas(t *testing.T, epsA, epsB []string, opts ...xds.Option) (a, b *fixture) {
	t.Helper()
	a, b = newFixture(t, opts...), newFixture(t, opts...)
	b.g.Update(func(tx *krt.Txn) {
		for i, name := range []string{"c1", "c2", "c3", "old"} {
			b.cds.In(tx).Set(edsCluster(name))
			b.eds.In(tx).Set(cla(name, fmt.Sprintf("10.9.0.%d:80", i+1)))
		}
		b.lds.In(tx).Set(apiListener("l1", "r0"))
		b.rds.In(tx).Set(weightedRoute("r1", "svc", []string{"c1", "c2"}, []uint32{3, 1}))
	})
	b.g.Update(func(tx *krt.Txn) {
		b.cds.In(tx).Delete("old")
		b.eds.In(tx).Delete("old")
	})
	applyConfig(t, a, epsA)
	applyConfig(t, b, epsB)
	if va, vb := a.srv.Stats().CacheVersion, b.srv.Stats().CacheVersion; va == vb {
		t.Fatalf("both replicas' caches are at graph version %d; the test needs different histories", va)
	}
	return a, b
}

// subscribeAll sends the SotW requests of a client of l1: every cluster,
// the endpoints of c1 and c2, l1 and r1. versions, when set, are the
// version_info of each type's request.
func subscribeAll(c *xdstest.SotW, versions map[string]string) {
	c.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType, VersionInfo: versions[xds.ClusterType]})
	c.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{"c1", "c2"}, VersionInfo: versions[xds.EndpointType]})
	c.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ListenerType, ResourceNames: []string{"l1"}, VersionInfo: versions[xds.ListenerType]})
	c.Send(&discovery.DiscoveryRequest{TypeUrl: xds.RouteType, ResourceNames: []string{"r1"}, VersionInfo: versions[xds.RouteType]})
}

// recvTypes receives n SotW responses of n distinct types.
func recvTypes(t testing.TB, c *xdstest.SotW, n int) map[string]*discovery.DiscoveryResponse {
	t.Helper()
	out := map[string]*discovery.DiscoveryResponse{}
	for range n {
		r := c.Recv()
		if out[r.TypeUrl] != nil {
			t.Fatalf("two responses of %s", r.TypeUrl)
		}
		out[r.TypeUrl] = r
	}
	return out
}

// quiet fails if a response arrives within quietFor.
func quiet[R any](t testing.TB, resps <-chan R) {
	t.Helper()
	select {
	case r, ok := <-resps:
		if ok {
			t.Fatalf("got a response, want none: %v", r)
		}
		t.Fatal("stream ended")
	case <-time.After(quietFor):
	}
}

func versionMap(rs map[string]*discovery.DiscoveryResponse) map[string]string {
	out := map[string]string{}
	for t, r := range rs {
		out[t] = r.VersionInfo
	}
	return out
}

// TestReplicasAgreeOnVersions: two replicas holding the same config give a
// client the same version_info, system_version_info and resource versions
// for the same subscriptions, whatever their graph versions, and a stream
// that reached the same resources by another path has the same version.
func TestReplicasAgreeOnVersions(t *testing.T) {
	a, b := newReplicas(t, replicaEndpoints, replicaEndpoints)
	types := []string{xds.ClusterType, xds.EndpointType, xds.ListenerType, xds.RouteType}

	ca, cb := xdstest.NewSotW(t, dial(t, a.addr), &corev3.Node{Id: "sotw-a"}), xdstest.NewSotW(t, dial(t, b.addr), &corev3.Node{Id: "sotw-b"})
	subscribeAll(ca, nil)
	subscribeAll(cb, nil)
	ra, rb := recvTypes(t, ca, 4), recvTypes(t, cb, 4)
	checkSotWAgree(t, types, ra, rb)

	// Another stream of b reaches the endpoints of c1 and c2 by way of c2
	// alone: once it holds both, its version is the same.
	other := xdstest.NewSotW(t, dial(t, b.addr), &corev3.Node{Id: "sotw-b-2"})
	other.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{"c2"}})
	first := other.Recv()
	if first.VersionInfo == ra[xds.EndpointType].VersionInfo {
		t.Fatalf("c2 alone has the version of c1 and c2: %s", first.VersionInfo)
	}
	other.Ack(first, "c2", "c1")
	second := other.Recv()
	if got := names(t, second); !slices.Equal(got, []string{"c1"}) {
		t.Fatalf("EDS after adding c1 = %v, want [c1]", got)
	}
	if second.VersionInfo != ra[xds.EndpointType].VersionInfo {
		t.Errorf("c2 then c1: version %s, want %s as for both at once", second.VersionInfo, ra[xds.EndpointType].VersionInfo)
	}

	// Delta: the same system versions and resource versions on both
	// replicas; and, holding the same resources, the version a SotW
	// stream has.
	da, db := deltaView(t, a, "delta-a", len(types)), deltaView(t, b, "delta-b", len(types))
	for _, typ := range types {
		if da[typ] == nil || db[typ] == nil {
			t.Fatalf("no Delta response of %s", typ)
		}
		va, vb := da[typ].SystemVersionInfo, db[typ].SystemVersionInfo
		if va != vb || va != ra[typ].VersionInfo {
			t.Errorf("%s system_version_info: a %q, b %q; want both %q, the SotW version of the same resources", typ, va, vb, ra[typ].VersionInfo)
		}
		if len(da[typ].Resources) != len(db[typ].Resources) {
			t.Fatalf("%s: %d resources from a, %d from b", typ, len(da[typ].Resources), len(db[typ].Resources))
		}
		for i, res := range da[typ].Resources {
			if o := db[typ].Resources[i]; res.Name != o.Name || res.Version != o.Version || res.Version == "" {
				t.Errorf("%s resource %s at %q on a, %s at %q on b", typ, res.Name, res.Version, o.Name, o.Version)
			}
		}
	}
}

// TestSotWMoveBetweenReplicas: a SotW client that got its config from
// replica a opens a stream to replica b, which holds the same config,
// naming a's versions as grpc-go does on reconnecting: b sends nothing,
// records the client as holding its resources, and pushes it the next
// change, which it may NACK as on any stream.
func TestSotWMoveBetweenReplicas(t *testing.T) {
	// The test answers each push within a second (on a busy machine a
	// shorter limit can pass while it waits for the CPU).
	const unansweredAfter = time.Second
	a, b := newReplicas(t, replicaEndpoints, replicaEndpoints, xds.WithUnansweredAfter(unansweredAfter))
	ca := xdstest.NewSotW(t, dial(t, a.addr), &corev3.Node{Id: "mover"})
	subscribeAll(ca, nil)
	ra := recvTypes(t, ca, 4)
	ca.Ack(ra[xds.ClusterType])
	ca.Ack(ra[xds.EndpointType], "c1", "c2")
	ca.Ack(ra[xds.ListenerType], "l1")
	ca.Ack(ra[xds.RouteType], "r1")

	cb := xdstest.NewSotW(t, dial(t, b.addr), &corev3.Node{Id: "mover"})
	resumed := time.Now()
	subscribeAll(cb, versionMap(ra))
	quiet(t, cb.Responses())
	// What b records as held is no response waiting for an answer.
	time.Sleep(time.Until(resumed.Add(unansweredAfter + quietFor)))
	if st := b.srv.Stats(); st.Unanswered != 0 {
		t.Errorf("b reports %d unanswered proxies for a resumed stream", st.Unanswered)
	}

	p := proxyByNode(t, b.srv, "mover")
	checkResumed(t, b, p, ra)

	// A change reaches the client through b, versioned as a versions the
	// same change.
	for _, f := range []*fixture{a, b} {
		f.eds.Set(cla("c1", "10.0.1.1:80"))
	}
	fromA, fromB := ca.Recv(), cb.Recv()
	if got := names(t, fromB); fromB.TypeUrl != xds.EndpointType || !slices.Equal(got, []string{"c1"}) {
		t.Fatalf("b pushed %s %v, want EDS [c1]", fromB.TypeUrl, got)
	}
	if fromB.VersionInfo != fromA.VersionInfo || fromB.VersionInfo == ra[xds.EndpointType].VersionInfo {
		t.Errorf("EDS after the change: b %s, a %s (before: %s); want equal new versions", fromB.VersionInfo, fromA.VersionInfo, ra[xds.EndpointType].VersionInfo)
	}

	nackRestoresResumed(t, b, cb, p.ID, ra[xds.EndpointType].VersionInfo, fromB.Nonce)

	// A new cluster: the full CDS state includes the resumed clusters.
	b.cds.Set(edsCluster("c4"))
	cds := cb.Recv()
	if got := names(t, cds); cds.TypeUrl != xds.ClusterType || !slices.Equal(got, []string{"c1", "c2", "c3", "c4"}) {
		t.Fatalf("b pushed %s %v, want CDS [c1 c2 c3 c4]", cds.TypeUrl, got)
	}
	cb.Ack(cds)
	waitFor(t, "the ACK", func() bool { return proxyByNode(t, b.srv, "mover").Types[xds.ClusterType].Acks == 1 })
	if st := b.srv.Stats(); st.Unanswered != 0 {
		t.Errorf("b reports %d unanswered proxies", st.Unanswered)
	}
}

// dumpedAddress returns the first endpoint address of the load
// assignment of cluster in a config dump.
func dumpedAddress(t testing.TB, dump xds.ConfigDump, cluster string) string {
	t.Helper()
	for _, j := range dump.Types[xds.EndpointType] {
		var cla endpointv3.ClusterLoadAssignment
		if err := protojson.Unmarshal(j, &cla); err != nil {
			t.Fatal(err)
		}
		if cla.ClusterName == cluster {
			return cla.GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress().GetAddress()
		}
	}
	return ""
}

// TestSotWMoveToChangedReplica: a client moving to a replica whose
// endpoints of c2 differ keeps its clusters and gets all the endpoints it
// asks for, versioned as that replica's own clients are; a version that
// is no digest (a server counting versions sent it) gets a response.
func TestSotWMoveToChangedReplica(t *testing.T) {
	a, b := newReplicas(t, replicaEndpoints, changedEndpoints)
	ca := xdstest.NewSotW(t, dial(t, a.addr), &corev3.Node{Id: "mover"})
	subscribeAll(ca, nil)
	ra := recvTypes(t, ca, 4)

	fresh := xdstest.NewSotW(t, dial(t, b.addr), &corev3.Node{Id: "fresh"})
	subscribeAll(fresh, nil)
	rb := recvTypes(t, fresh, 4)
	if rb[xds.EndpointType].VersionInfo == ra[xds.EndpointType].VersionInfo {
		t.Fatal("the replicas' endpoints differ but their versions are equal")
	}

	versions := versionMap(ra)
	versions[xds.ListenerType] = "7"
	cb := xdstest.NewSotW(t, dial(t, b.addr), &corev3.Node{Id: "mover"})
	subscribeAll(cb, versions)
	got := recvTypes(t, cb, 2)
	eds, lds := got[xds.EndpointType], got[xds.ListenerType]
	if eds == nil || lds == nil {
		t.Fatalf("got responses of %v, want EDS and LDS", slices.Collect(maps.Keys(got)))
	}
	if n := names(t, eds); !slices.Equal(n, []string{"c1", "c2"}) || eds.VersionInfo != rb[xds.EndpointType].VersionInfo {
		t.Errorf("EDS from b = %v at %s, want [c1 c2] at %s", n, eds.VersionInfo, rb[xds.EndpointType].VersionInfo)
	}
	if n := names(t, lds); !slices.Equal(n, []string{"l1"}) || lds.VersionInfo != ra[xds.ListenerType].VersionInfo {
		t.Errorf("LDS from b = %v at %s, want [l1] at %s", n, lds.VersionInfo, ra[xds.ListenerType].VersionInfo)
	}
	quiet(t, cb.Responses())
	st := b.srv.Stats()
	if st.Resumed["cds"] != 1 || st.Resumed["rds"] != 1 || st.Resumed["eds"] != 0 || st.Resumed["lds"] != 0 {
		t.Errorf("b resumed %v; want cds and rds only", st.Resumed)
	}
}

// TestDeltaMoveBetweenReplicas: a Delta client moving to a replica whose
// endpoints of c2 differ, naming the versions it holds, is sent c2 only,
// versioned as that replica's own clients are; b's registry shows the
// clusters it holds.
func TestDeltaMoveBetweenReplicas(t *testing.T) {
	a, b := newReplicas(t, replicaEndpoints, changedEndpoints)
	subscribe := func(c *xdstest.Delta, initial map[string]map[string]string) {
		c.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.ClusterType, ResourceNamesSubscribe: []string{"*"},
			InitialResourceVersions: initial[xds.ClusterType]})
		c.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNamesSubscribe: []string{"c1", "c2", "c3"},
			InitialResourceVersions: initial[xds.EndpointType]})
	}
	da := xdstest.NewDelta(t, dial(t, a.addr), &corev3.Node{Id: "mover"})
	subscribe(da, nil)
	held := map[string]map[string]string{}
	for range 2 {
		r := da.Recv()
		held[r.TypeUrl] = map[string]string{}
		for _, res := range r.Resources {
			held[r.TypeUrl][res.Name] = res.Version
		}
		da.Ack(r)
	}
	if len(held[xds.ClusterType]) != 3 || len(held[xds.EndpointType]) != 3 {
		t.Fatalf("a sent %v", held)
	}

	fresh := xdstest.NewDelta(t, dial(t, b.addr), &corev3.Node{Id: "fresh"})
	fresh.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNamesSubscribe: []string{"c1", "c2", "c3"}})
	want := fresh.Recv()

	db := xdstest.NewDelta(t, dial(t, b.addr), &corev3.Node{Id: "mover"})
	subscribe(db, held)
	eds := db.Recv()
	if got := deltaNames(t, eds); eds.TypeUrl != xds.EndpointType || !slices.Equal(got, []string{"c2"}) || len(eds.RemovedResources) != 0 {
		t.Fatalf("b sent %s %v removed %v, want EDS [c2]", eds.TypeUrl, got, eds.RemovedResources)
	}
	if eds.SystemVersionInfo != want.SystemVersionInfo {
		t.Errorf("EDS system version %s, want %s as b's fresh client", eds.SystemVersionInfo, want.SystemVersionInfo)
	}
	if eds.Resources[0].Version == held[xds.EndpointType]["c2"] {
		t.Errorf("c2 sent at the version a sent")
	}
	db.Ack(eds)
	quiet(t, db.Responses())

	p := proxyByNode(t, b.srv, "mover")
	if ts := p.Types[xds.ClusterType]; !ts.Resumed || ts.Pushes != 0 || ts.Resources != 3 || ts.AckedVersion == "" {
		t.Errorf("CDS on b: %+v; want resumed holding 3", ts)
	}
	if ts := p.Types[xds.EndpointType]; ts.Resumed || ts.Pushes != 1 || ts.Resources != 3 {
		t.Errorf("EDS on b: %+v; want 1 push, holding 3", ts)
	}
	dump, err := b.srv.ConfigDump(p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(dump.Types[xds.ClusterType]) != 3 || len(dump.Types[xds.EndpointType]) != 3 {
		t.Errorf("b's config dump holds %d clusters and %d endpoints, want 3 and 3", len(dump.Types[xds.ClusterType]), len(dump.Types[xds.EndpointType]))
	}
	if st := b.srv.Stats(); st.Resumed["cds"] != 1 || st.Resumed["eds"] != 0 {
		t.Errorf("b resumed %v, want cds only", st.Resumed)
	}
}

// TestSotWMoveBetweenIsolatingReplicas: under namespace isolation a
// version covers what the proxy's namespace may see. A proxy of namespace
// a moving between replicas with its wildcard subscription's version gets
// nothing; a proxy of namespace b naming that version, which is not what
// it may see, gets its own clusters.
func TestSotWMoveBetweenIsolatingReplicas(t *testing.T) {
	a := newScopedFixture(t, scopedItems, xds.WithNamespaceIsolation(nil))
	b := newScopedFixture(t, scopedItems, xds.WithNamespaceIsolation(nil))
	ca := xdstest.NewSotW(t, dial(t, a.addr), nodeIn(t, "in-a", "a"))
	ca.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType})
	ra := ca.Recv()
	if got := names(t, ra); !slices.Equal(got, []string{"priv.a", "pub.a", "pub.b", "shared.a"}) {
		t.Fatalf("a sent namespace a %v", got)
	}

	cb := xdstest.NewSotW(t, dial(t, b.addr), nodeIn(t, "in-a", "a"))
	cb.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType, VersionInfo: ra.VersionInfo})
	quiet(t, cb.Responses())
	if ts := proxyByNode(t, b.srv, "in-a").Types[xds.ClusterType]; !ts.Resumed || ts.Resources != 4 {
		t.Errorf("namespace a's proxy on b: %+v; want resumed holding 4", ts)
	}

	other := xdstest.NewSotW(t, dial(t, b.addr), nodeIn(t, "in-b", "b"))
	other.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType, VersionInfo: ra.VersionInfo})
	rb := other.Recv()
	if got := names(t, rb); !slices.Equal(got, []string{"pub.a", "pub.b", "rest.a"}) || rb.VersionInfo == ra.VersionInfo {
		t.Errorf("namespace b's proxy got %v at %s (a's version %s)", got, rb.VersionInfo, ra.VersionInfo)
	}
}

// checkResumed checks that replica b resumed the stream the client moved
// to it at the versions ra it held from replica a: nothing sent, nothing
// pending, and the resumed resources in its stats and config dump.
func checkResumed(t *testing.T, b *fixture, p xds.ProxyStatus, ra map[string]*discovery.DiscoveryResponse) {
	t.Helper()
	held := map[string]int{xds.ClusterType: 3, xds.EndpointType: 2, xds.ListenerType: 1, xds.RouteType: 1}
	for typ, n := range held {
		ts := p.Types[typ]
		v := ra[typ].VersionInfo
		if !ts.Resumed || ts.Pushes != 0 || ts.Resources != n || ts.SentVersion != v || ts.AckedVersion != v || ts.SentNonce != "" || ts.Pending != 0 {
			t.Errorf("%s on b: %+v; want resumed, holding %d resources at %s, nothing sent or pending", typ, ts, n, v)
		}
	}
	if p.Behind || p.Stale || p.Rejecting {
		t.Errorf("proxy on b behind %v, stale %v, rejecting %v; want none", p.Behind, p.Stale, p.Rejecting)
	}
	st := b.srv.Stats()
	for _, typ := range []string{"cds", "eds", "lds", "rds"} {
		if st.Pushes[typ] != 0 || st.Resumed[typ] != 1 {
			t.Errorf("b's stats for %s: %d pushes, %d resumed; want 0 and 1", typ, st.Pushes[typ], st.Resumed[typ])
		}
	}
	if st.Unanswered != 0 {
		t.Errorf("b reports %d unanswered proxies; it sent nothing to answer", st.Unanswered)
	}
	dump, err := b.srv.ConfigDump(p.ID)
	if err != nil {
		t.Fatal(err)
	}
	for typ, n := range held {
		if len(dump.Types[typ]) != n {
			t.Errorf("b's config dump holds %d resources of %s, want %d", len(dump.Types[typ]), typ, n)
		}
	}
}

// nackRestoresResumed has the moved client reject b's push (nonce): b puts
// back the resumed c1, naming held, the version the client holds.
func nackRestoresResumed(t *testing.T, b *fixture, cb *xdstest.SotW, id uint64, held, nonce string) {
	t.Helper()
	cb.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{"c1", "c2"},
		VersionInfo: held, ResponseNonce: nonce, ErrorDetail: &status.Status{Code: 3, Message: "no"}})
	waitFor(t, "the NACK", func() bool { return proxyByNode(t, b.srv, "mover").Types[xds.EndpointType].Nacks == 1 })
	ts := proxyByNode(t, b.srv, "mover").Types[xds.EndpointType]
	if !slices.Equal(ts.Rejected, []string{"c1"}) || ts.LastNack.Version != held {
		t.Errorf("after the NACK: %+v", ts)
	}
	dump, err := b.srv.ConfigDump(id)
	if err != nil {
		t.Fatal(err)
	}
	if got := dumpedAddress(t, dump, "c1"); len(dump.Types[xds.EndpointType]) != 2 || got != "10.0.0.1" {
		t.Errorf("after the NACK b's config dump holds c1 at %q, want it back at 10.0.0.1", got)
	}
}

// checkSotWAgree checks that two replicas answered the same subscription
// (ra, rb) with equal digest versions, distinct per type, and equal
// resources.
func checkSotWAgree(t *testing.T, types []string, ra, rb map[string]*discovery.DiscoveryResponse) {
	t.Helper()
	seen := map[string]string{}
	for _, typ := range types {
		va, vb := ra[typ].VersionInfo, rb[typ].VersionInfo
		if va != vb || len(va) != 32 {
			t.Errorf("%s version_info: replica a %q, b %q; want equal digests", typ, va, vb)
		}
		if other, dup := seen[va]; dup {
			t.Errorf("%s and %s have the same version %s", typ, other, va)
		}
		seen[va] = typ
		if len(ra[typ].Resources) == 0 || len(ra[typ].Resources) != len(rb[typ].Resources) {
			t.Fatalf("%s: %d resources from a, %d from b", typ, len(ra[typ].Resources), len(rb[typ].Resources))
		}
		for i, res := range ra[typ].Resources {
			if !proto.Equal(res, rb[typ].Resources[i]) {
				t.Errorf("%s resource %d differs between the replicas", typ, i)
			}
		}
	}
}

// deltaView subscribes a delta stream of node on f to the replica test's
// resources and returns the first response of each of the n types.
func deltaView(t *testing.T, f *fixture, node string, n int) map[string]*discovery.DeltaDiscoveryResponse {
	t.Helper()
	c := xdstest.NewDelta(t, dial(t, f.addr), &corev3.Node{Id: node})
	c.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.ClusterType, ResourceNamesSubscribe: []string{"*"}})
	c.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNamesSubscribe: []string{"c1", "c2"}})
	c.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.ListenerType, ResourceNamesSubscribe: []string{"l1"}})
	c.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.RouteType, ResourceNamesSubscribe: []string{"r1"}})
	out := map[string]*discovery.DeltaDiscoveryResponse{}
	for range n {
		r := c.Recv()
		out[r.TypeUrl] = r
	}
	return out
}
