package xds_test

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest"
)

// TestSotWProtocol walks one state-of-the-world stream over real gRPC
// through subscription, change, NACK, removal and unsubscription, in that
// order: each step relies on the state the previous one left.
func TestSotWProtocol(t *testing.T) {
	f := newWalkFixture(t)
	s := &sotwWalk{t: t, f: f, c: xdstest.NewSotW(t, dial(t, f.addr), &corev3.Node{Id: "node-1"})}

	s.subscribe()
	s.unsubscribedChangeIsQuiet()
	s.nackKeepsAcceptedVersion()
	s.fixAndRemoveClusters()
	s.endpointRemovalAndUnsubscribe()

	// The server counts a push once its send returns, which may be after
	// the client has the response.
	waitFor(t, "the last push counted", func() bool { return f.srv.Stats().Pushes["eds"] >= 4 })
	st := f.srv.Stats()
	if st.Nacks["cds"] != 1 || st.Acks["cds"] < 2 || st.Pushes["eds"] < 4 || st.ConnectedProxies != 1 {
		t.Fatalf("stats = %+v", st)
	}
}

// sotwWalk is the state TestSotWProtocol carries from step to step.
type sotwWalk struct {
	t        *testing.T
	f        *fixture
	c        *xdstest.SotW
	ackedCDS *discovery.DiscoveryResponse
	eds      *discovery.DiscoveryResponse
}

// recvNames receives one response and checks the names it carries.
func (s *sotwWalk) recvNames(what string, want ...string) *discovery.DiscoveryResponse {
	s.t.Helper()
	return recvNames(s.t, s.c.Recv, names, what, want...)
}

// subscribe opens wildcard CDS (every cluster) and named EDS (only the
// subscribed CLA).
func (s *sotwWalk) subscribe() {
	s.c.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType})
	cds := s.recvNames("CDS", "a", "b")
	s.c.Ack(cds)
	s.ackedCDS = cds

	s.c.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{"a"}})
	s.eds = s.recvNames("EDS", "a")
	s.c.Ack(s.eds, "a")
}

// unsubscribedChangeIsQuiet: a change to an unsubscribed CLA sends
// nothing; the next response carries only the subscribed one that changed
// after it.
func (s *sotwWalk) unsubscribedChangeIsQuiet() {
	t := s.t
	s.f.eds.Set(cla("b", "10.0.0.22:80"))
	s.f.eds.Set(cla("a", "10.0.0.11:80"))
	s.eds = s.recvNames("EDS after change", "a")
	if got := claOf(t, s.eds.Resources, "a").Endpoints[0].LbEndpoints[0].GetEndpoint().Address.GetSocketAddress().Address; got != "10.0.0.11" {
		t.Fatalf("EDS a address = %s, want 10.0.0.11", got)
	}
	s.c.Ack(s.eds, "a")
}

// nackKeepsAcceptedVersion: the client rejects a changed cluster a; the
// registry records the NACK, and the rejected version is not sent again.
func (s *sotwWalk) nackKeepsAcceptedVersion() {
	bad := edsCluster("a")
	bad.ConnectTimeout = durationpb.New(-1)
	s.f.cds.Set(bad)
	cds := s.recvNames("CDS after change", "a", "b")
	// Envoy keeps an updated cluster warming until its load assignment
	// comes again: the unchanged CLA follows in the same push.
	eds := s.recvNames("EDS resent after the cluster change", "a")
	if eds.TypeUrl != xds.EndpointType {
		s.t.Fatalf("after CDS, got %s, want EDS", eds.TypeUrl)
	}
	s.c.Send(&discovery.DiscoveryRequest{
		TypeUrl: xds.ClusterType, VersionInfo: s.ackedCDS.VersionInfo, ResponseNonce: cds.Nonce,
		ErrorDetail: &status.Status{Code: 3, Message: "cluster a: negative connect timeout"},
	})
	s.c.Ack(eds, "a")
	s.checkNackRecorded()

	// When b changes, the full CDS response carries a at its last
	// accepted version.
	b2 := edsCluster("b")
	b2.ConnectTimeout = durationpb.New(5e9)
	s.f.cds.Set(b2)
	cds = s.recvNames("CDS after b change", "a", "b")
	if gotA := firstCluster(s.t, cds); !proto.Equal(gotA, edsCluster("a")) {
		s.t.Fatalf("CDS resent a as %v, want the accepted version", gotA)
	}
	s.c.Ack(cds)
}

// checkNackRecorded: the registry records the NACK and keeps the last
// ACKed version.
func (s *sotwWalk) checkNackRecorded() {
	t := s.t
	var p xds.ProxyStatus
	waitFor(t, "the NACK in the registry", func() bool {
		p = proxyByNode(t, s.f.srv, "node-1")
		return p.Types[xds.ClusterType].Nacks > 0
	})
	ts := p.Types[xds.ClusterType]
	if ts.LastNack == nil || ts.LastNack.Message != "cluster a: negative connect timeout" || ts.LastNack.Code != 3 {
		t.Fatalf("LastNack = %+v", ts.LastNack)
	}
	if ts.AckedVersion != s.ackedCDS.VersionInfo || ts.AckedNonce != s.ackedCDS.Nonce {
		t.Fatalf("acked = %s/%s, want %s/%s", ts.AckedVersion, ts.AckedNonce, s.ackedCDS.VersionInfo, s.ackedCDS.Nonce)
	}
	if !slices.Equal(ts.LastNack.Rejected, []string{"a"}) || !slices.Equal(ts.Rejected, []string{"a"}) || !p.Rejecting {
		t.Fatalf("rejected = %v / %v, rejecting %v", ts.LastNack.Rejected, ts.Rejected, p.Rejecting)
	}
}

// fixAndRemoveClusters: fixing a sends it again; CDS removal is by
// omission.
func (s *sotwWalk) fixAndRemoveClusters() {
	fixed := edsCluster("a")
	fixed.ConnectTimeout = durationpb.New(1e9)
	s.f.cds.Set(edsCluster("a"), fixed)
	cds := s.c.Recv()
	if gotA := firstCluster(s.t, cds); gotA.ConnectTimeout.AsDuration() != 1e9 {
		s.t.Fatalf("CDS a = %v, want the fixed version", gotA)
	}
	s.eds = s.recvNames("EDS resent after the fixed cluster", "a")
	s.c.Ack(cds)
	s.c.Ack(s.eds, "a")

	s.f.cds.Delete("b")
	cds = s.recvNames("CDS after delete", "a")
	s.c.Ack(cds)
}

// endpointRemovalAndUnsubscribe: EDS removal is not sent, so deleting a
// sends nothing and the next response (for the newly subscribed c)
// carries only c. After unsubscribing c, a change to c is no longer sent
// and a re-added a is.
func (s *sotwWalk) endpointRemovalAndUnsubscribe() {
	s.f.eds.Delete("a")
	s.c.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{"a", "c"}, VersionInfo: s.eds.VersionInfo, ResponseNonce: s.eds.Nonce})
	s.eds = s.recvNames("EDS after subscribing c", "c")
	s.c.Ack(s.eds, "a", "c")

	s.c.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{"a"}, VersionInfo: s.eds.VersionInfo, ResponseNonce: s.eds.Nonce})
	waitFor(s.t, "the unsubscription", func() bool {
		return slices.Equal(proxyByNode(s.t, s.f.srv, "node-1").Types[xds.EndpointType].Subscribed, []string{"a"})
	})
	s.f.eds.Set(cla("c", "10.0.0.33:80"))
	s.f.eds.Set(cla("a", "10.0.0.1:80"))
	s.eds = s.recvNames("EDS after unsubscribing c", "a")
}

// firstCluster decodes the first resource of a CDS response.
func firstCluster(t *testing.T, r *discovery.DiscoveryResponse) *clusterv3.Cluster {
	t.Helper()
	var c clusterv3.Cluster
	if err := r.Resources[0].UnmarshalTo(&c); err != nil {
		t.Fatal(err)
	}
	return &c
}

// TestSotWListenerRoute checks a wildcard LDS with named RDS, and that the
// legacy empty request is a wildcard only for Listeners and Clusters.
func TestSotWListenerRoute(t *testing.T) {
	obs := &countingObserver{}
	f := newFixture(t, xds.WithObserver(obs))
	f.lds.Set(apiListener("svc:80", "svc:80"))
	f.rds.Set(weightedRoute("svc:80", "svc:80", []string{"a"}, []uint32{1}), weightedRoute("other:80", "other:80", []string{"b"}, []uint32{1}))
	f.synced(t)
	c := xdstest.NewSotW(t, dial(t, f.addr), &corev3.Node{Id: "node-1"})

	// An empty RDS request subscribes to nothing: the LDS response comes
	// first, and no RDS response.
	c.Send(&discovery.DiscoveryRequest{TypeUrl: xds.RouteType})
	c.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ListenerType})
	lds := c.Recv()
	if lds.TypeUrl != xds.ListenerType || !slices.Equal(names(t, lds), []string{"svc:80"}) {
		t.Fatalf("got %s %v, want LDS [svc:80]", lds.TypeUrl, names(t, lds))
	}
	c.Ack(lds)
	c.Send(&discovery.DiscoveryRequest{TypeUrl: xds.RouteType, ResourceNames: []string{"svc:80"}})
	rds := c.Recv()
	if rds.TypeUrl != xds.RouteType || !slices.Equal(names(t, rds), []string{"svc:80"}) {
		t.Fatalf("got %s %v, want RDS [svc:80]", rds.TypeUrl, names(t, rds))
	}
	c.Ack(rds, "svc:80")

	// Adding a listener resends the full LDS set.
	f.lds.Set(apiListener("other:80", "other:80"))
	lds2 := c.Recv()
	if !slices.Equal(names(t, lds2), []string{"other:80", "svc:80"}) {
		t.Fatalf("LDS = %v", names(t, lds2))
	}
	// An ACK with the same subscription gets no response; deleting the
	// listener removes it by omission.
	c.Ack(lds2)
	f.lds.Delete("other:80")
	lds3 := c.Recv()
	if lds3.TypeUrl != xds.ListenerType || !slices.Equal(names(t, lds3), []string{"svc:80"}) {
		t.Fatalf("got %s %v, want LDS [svc:80]", lds3.TypeUrl, names(t, lds3))
	}

	dump, err := f.srv.ConfigDump(proxyByNode(t, f.srv, "node-1").ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(dump.Types[xds.ListenerType]) != 1 || len(dump.Types[xds.RouteType]) != 1 {
		t.Fatalf("config dump = %v", dump.Types)
	}
	// The observer hears of a push once its send returns, which may be
	// after the client has read it.
	waitFor(t, "the observer to count 4 pushes", func() bool { return obs.pushes.Load() == 4 })
	// The stream's loop picks a queued request or a wake-up in random
	// order, so the ACKs sent before the second LDS response may still be
	// queued when the third goes out: wait for them. The ACK of the second
	// LDS response may arrive after the third was sent, and then counts as
	// stale.
	waitFor(t, "the observer to count the first 2 acks", func() bool { return obs.acks.Load() >= 2 })
	if obs.connects.Load() != 1 || obs.pushes.Load() != 4 || obs.acks.Load() < 2 {
		t.Fatalf("observer saw %d connects, %d pushes, %d acks; want 1, 4, at least 2",
			obs.connects.Load(), obs.pushes.Load(), obs.acks.Load())
	}
}

// countingObserver counts what an Observer is told.
type countingObserver struct {
	pushes, acks, nacks, connects, disconnects atomic.Int64
}

func (o *countingObserver) Push(string, int, int, time.Duration) { o.pushes.Add(1) }
func (o *countingObserver) Ack(string)                           { o.acks.Add(1) }
func (o *countingObserver) Nack(string)                          { o.nacks.Add(1) }
func (o *countingObserver) Connect(xds.StreamKind)               { o.connects.Add(1) }
func (o *countingObserver) Disconnect(xds.StreamKind)            { o.disconnects.Add(1) }

// waitFor waits until cond holds, failing the test after recvTimeout.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(recvTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func proxyByNode(t testing.TB, s *xds.Server, node string) xds.ProxyStatus {
	t.Helper()
	for _, p := range s.Proxies() {
		if p.NodeID == node && p.Connected {
			return p
		}
	}
	t.Fatalf("proxy %s not in registry", node)
	return xds.ProxyStatus{}
}

// TestSotWNackRevertsToLastAck sends two changes of a cluster before the
// client answers: the client NACKs both, and the server goes back to the
// version last ACKed, not to the one in between.
func TestSotWNackRevertsToLastAck(t *testing.T) {
	f := newFixture(t)
	timeout := func(s int64) *clusterv3.Cluster {
		c := edsCluster("a")
		c.ConnectTimeout = durationpb.New(time.Duration(s) * time.Second)
		return c
	}
	f.cds.Set(timeout(1))
	f.synced(t)
	c := xdstest.NewSotW(t, dial(t, f.addr), &corev3.Node{Id: "node-1"})
	c.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType})
	acked := c.Recv()
	c.Ack(acked)
	waitFor(t, "the ACK", func() bool { return proxyByNode(t, f.srv, "node-1").Types[xds.ClusterType].Acks == 1 })

	f.cds.Set(timeout(2))
	r2 := c.Recv()
	f.cds.Set(timeout(3))
	r3 := c.Recv()
	for _, r := range []*discovery.DiscoveryResponse{r2, r3} {
		c.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType, VersionInfo: acked.VersionInfo, ResponseNonce: r.Nonce,
			ErrorDetail: &status.Status{Code: 3, Message: "rejected " + r.Nonce}})
	}
	waitFor(t, "both NACKs", func() bool { return proxyByNode(t, f.srv, "node-1").Types[xds.ClusterType].Nacks == 2 })
	ts := proxyByNode(t, f.srv, "node-1").Types[xds.ClusterType]
	if ts.LastNack.Message != "rejected "+r3.Nonce || !slices.Equal(ts.Rejected, []string{"a"}) {
		t.Fatalf("registry: %+v", ts)
	}

	// The next full response carries a at the ACKed version.
	f.cds.Set(edsCluster("b"))
	r := c.Recv()
	if got := names(t, r); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("CDS = %v", got)
	}
	var a clusterv3.Cluster
	if err := r.Resources[0].UnmarshalTo(&a); err != nil {
		t.Fatal(err)
	}
	if a.ConnectTimeout.AsDuration() != time.Second {
		t.Fatalf("a resent with timeout %v, want the ACKed 1s", a.ConnectTimeout.AsDuration())
	}
}
