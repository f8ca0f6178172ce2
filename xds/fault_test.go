package xds_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest"
)

// bigCLA is a load assignment of about 40 KB whose first address encodes v.
func bigCLA(name string, v int) *endpointv3.ClusterLoadAssignment {
	addrs := make([]string, 2000)
	for i := range addrs {
		addrs[i] = fmt.Sprintf("10.%d.%d.%d:80", v%256, i/256, i%256)
	}
	return cla(name, addrs...)
}

func firstAddr(t testing.TB, r *discovery.DiscoveryResponse, name string) string {
	t.Helper()
	return claOf(t, r.Resources, name).Endpoints[0].LbEndpoints[0].GetEndpoint().Address.GetSocketAddress().Address
}

// TestFaultDisconnectMidPush has clients vanish while the server pushes
// large responses to them: the server ends their streams, keeps serving
// the others, and the registry shows who left.
func TestFaultDisconnectMidPush(t *testing.T) {
	f := newFixture(t)
	f.eds.Set(bigCLA("big", 0))
	cc := dial(t, f.addr)
	const clients, rounds = 12, 6
	cancels := openLeavers(t, cc, clients)
	live := xdstest.NewSotW(t, cc, &corev3.Node{Id: "live"})
	live.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{"big"}})
	live.Ack(live.Recv(), "big")

	// Each round changes the resource and, while the server pushes it,
	// cancels two of the other streams without reading.
	for v := 1; v <= rounds; v++ {
		f.eds.Set(bigCLA("big", v))
		cancels[2*(v-1)]()
		cancels[2*(v-1)+1]()
		want := fmt.Sprintf("10.%d.0.0", v)
		for {
			r := live.Recv()
			live.Ack(r, "big")
			if firstAddr(t, r, "big") == want {
				break
			}
		}
	}
	waitFor(t, "only the live stream connected", func() bool { return f.srv.Stats().ConnectedProxies == 1 })
	checkAllDisconnected(t, f.srv, clients)
	// A new client gets the current state.
	late := xdstest.NewSotW(t, cc, &corev3.Node{Id: "late"})
	late.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{"big"}})
	if got, want := firstAddr(t, late.Recv(), "big"), fmt.Sprintf("10.%d.0.0", rounds); got != want {
		t.Fatalf("late client got %s, want %s", got, want)
	}
}

// TestFaultSlowConsumers has several clients that never read while another
// follows every change: the live client gets each change, and each stuck
// stream holds at most one pending entry per subscribed name, not a queue of
// responses.
func TestFaultSlowConsumers(t *testing.T) {
	f := newFixture(t)
	f.eds.Set(bigCLA("big", 0))
	cc := dial(t, f.addr)
	const stuck = 5
	for i := range stuck {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s, err := discovery.NewAggregatedDiscoveryServiceClient(cc).DeltaAggregatedResources(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(&discovery.DeltaDiscoveryRequest{Node: &corev3.Node{Id: fmt.Sprintf("stuck-%d", i)}, TypeUrl: xds.EndpointType, ResourceNamesSubscribe: []string{"big"}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range stuck {
		waitFor(t, "stuck stream subscribed", func() bool {
			for _, p := range f.srv.Proxies() {
				if p.NodeID == fmt.Sprintf("stuck-%d", i) {
					return p.Types[xds.EndpointType].Pushes > 0
				}
			}
			return false
		})
	}
	live := xdstest.NewDelta(t, dial(t, f.addr), &corev3.Node{Id: "live"})
	live.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNamesSubscribe: []string{"big"}})
	live.Ack(live.Recv())
	changes := 30
	if raceEnabled {
		changes = 10
	}
	for v := 1; v <= changes; v++ {
		f.eds.Set(bigCLA("big", v))
		r := live.Recv()
		live.Ack(r)
		var c endpointv3.ClusterLoadAssignment
		if err := r.Resources[0].Resource.UnmarshalTo(&c); err != nil {
			t.Fatal(err)
		}
		// Debounce 0 and a live reader: every change arrives on its own.
		if got, want := c.Endpoints[0].LbEndpoints[0].GetEndpoint().Address.GetSocketAddress().Address, fmt.Sprintf("10.%d.0.0", v); got != want {
			t.Fatalf("live client got %s, want %s", got, want)
		}
	}
	for i := range stuck {
		p := proxyByNode(t, f.srv, fmt.Sprintf("stuck-%d", i))
		ts := p.Types[xds.EndpointType]
		// The first response and at most one per change: responses
		// coalesce, they never queue.
		if ts.Pending > 1 || p.Pending > 1 || ts.Pushes > uint64(changes)+1 {
			t.Errorf("stuck-%d: %d pending, %d pushes for %d changes", i, ts.Pending, ts.Pushes, changes)
		}
		if !p.Behind {
			t.Errorf("stuck-%d not flagged behind", i)
		}
	}
}

// TestFaultNackEverything has a client reject every response: the server
// does not resend the rejected versions, keeps the last ACKed version, and
// shows the rejection in the registry and the stats.
func TestFaultNackEverything(t *testing.T) {
	f := newFixture(t)
	f.cds.Set(edsCluster("c0"))
	f.eds.Set(cla("c0", "10.0.0.1:80"))
	c := xdstest.NewSotW(t, dial(t, f.addr), &corev3.Node{Id: "nacker"})
	c.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType})
	first := c.Recv()
	c.Ack(first)
	c.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{"c0"}})
	c.Ack(c.Recv(), "c0")

	const nacks = 5
	for i := 1; i <= nacks; i++ {
		f.cds.Set(edsCluster(fmt.Sprintf("c%d", i)))
		r := c.Recv()
		if r.TypeUrl != xds.ClusterType {
			t.Fatalf("change %d: got %s, want clusters", i, r.TypeUrl)
		}
		c.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType, VersionInfo: first.VersionInfo, ResponseNonce: r.Nonce,
			ErrorDetail: &rpcstatus.Status{Code: 3, Message: fmt.Sprintf("rejected %d", i)}})
		// Once the server has taken the NACK, a resend caused by it would
		// arrive before the answer to a later change of another type: the
		// stream is ordered.
		waitFor(t, "the NACK taken", func() bool { return proxyByNode(t, f.srv, "nacker").Types[xds.ClusterType].Nacks == uint64(i) })
		f.eds.Set(cla("c0", fmt.Sprintf("10.0.1.%d:80", i)))
		if r := c.Recv(); r.TypeUrl != xds.EndpointType {
			t.Fatalf("after NACK %d: got %s (nonce %s), want the endpoint change", i, r.TypeUrl, r.Nonce)
		} else {
			c.Ack(r, "c0")
		}
	}
	p := proxyByNode(t, f.srv, "nacker")
	ts := p.Types[xds.ClusterType]
	if ts.AckedVersion != first.VersionInfo || ts.Pushes != nacks+1 {
		t.Errorf("acked %q (want %q), %d pushes (want %d)", ts.AckedVersion, first.VersionInfo, ts.Pushes, nacks+1)
	}
	if ts.LastNack == nil || ts.LastNack.Message != fmt.Sprintf("rejected %d", nacks) || len(ts.LastNack.Rejected) == 0 {
		t.Errorf("last NACK %+v", ts.LastNack)
	}
	if !p.Rejecting {
		t.Errorf("proxy not flagged rejecting")
	}
	if n := f.srv.Stats().Nacks["cds"]; n < nacks {
		t.Errorf("stats count %d cds NACKs, want %d", n, nacks)
	}
}

// TestFaultReconnectStorm opens and drops streams as fast as a few
// workers can: every stream is answered, none stays connected, and the
// registry keeps only its retention's worth of disconnected proxies.
func TestFaultReconnectStorm(t *testing.T) {
	const retained = 50
	f := newFixture(t, xds.WithRetention(time.Minute, retained))
	f.cds.Set(edsCluster("c0"), edsCluster("c1"))
	n := 1000
	if testing.Short() || raceEnabled {
		n = 200
	}
	const workers = 16
	ccs := []discovery.AggregatedDiscoveryServiceClient{}
	for range 4 {
		ccs = append(ccs, discovery.NewAggregatedDiscoveryServiceClient(dial(t, f.addr)))
	}
	start := f.srv.Stats().Streams
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				if err := oneStream(ccs[i%len(ccs)], i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	waitFor(t, "every stream closed", func() bool { return f.srv.Stats().ConnectedProxies == 0 })
	if got := f.srv.Stats().Streams - start; got != uint64(n) {
		t.Errorf("%d streams counted, want %d", got, n)
	}
	if got := len(f.srv.Proxies()); got > retained {
		t.Errorf("registry holds %d proxies, retention is %d", got, retained)
	}
}

// oneStream opens a stream, waits for the clusters and drops it.
func oneStream(c discovery.AggregatedDiscoveryServiceClient, i int) error {
	ctx, cancel := context.WithTimeout(context.Background(), recvTimeout)
	defer cancel()
	s, err := c.StreamAggregatedResources(ctx)
	if err != nil {
		return fmt.Errorf("stream %d: %w", i, err)
	}
	if err := s.Send(&discovery.DiscoveryRequest{Node: &corev3.Node{Id: fmt.Sprintf("storm-%d", i)}, TypeUrl: xds.ClusterType}); err != nil {
		return fmt.Errorf("stream %d send: %w", i, err)
	}
	r, err := s.Recv()
	if err != nil {
		return fmt.Errorf("stream %d recv: %w", i, err)
	}
	if len(r.Resources) != 2 {
		return fmt.Errorf("stream %d: %d clusters, want 2", i, len(r.Resources))
	}
	return nil
}

// controlPlane is a graph and server serving one cluster's endpoints and
// the route and listener to it, until stop is called.
type controlPlane struct {
	srv  *xds.Server
	stop func()
}

func startControlPlane(t testing.TB, lis net.Listener, target, cluster string, backends ...string) *controlPlane {
	t.Helper()
	g := krt.NewGraph()
	r := newResources(g)
	srv := xds.New(g, r.sources(), xds.WithDebounce(0), xds.WithShutdownGrace(50*time.Millisecond))
	r.lds.Set(apiListener(target, target))
	r.rds.Set(weightedRoute(target, target, []string{cluster}, []uint32{1}))
	r.cds.Set(edsCluster(cluster))
	r.eds.Set(cla(cluster, backends...))
	cp := &controlPlane{srv: srv, stop: start(t, g, srv, lis)}
	t.Cleanup(cp.stop)
	return cp
}

// TestFaultControlPlaneRestart stops the control plane under a connected
// grpc-go proxyless client: the client keeps routing with its last config
// while the server is away, reconnects when a new server listens on the
// same port, and takes that server's config. The new server's Listener,
// Route and Cluster are those of the first, whose versions the client
// names on reconnecting: it is sent only the Endpoints, which changed.
func TestFaultControlPlaneRestart(t *testing.T) {
	const target = "echo.default.svc.cluster.local:7070"
	const cluster = "outbound|7070||echo.default.svc.cluster.local"
	a, b := startBackend(t, "127.0.0.21"), startBackend(t, "127.0.0.22")
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	first := startControlPlane(t, lis, target, cluster, a.addr)
	cc := xdsClient(t, addr, "restart-client", target)
	reachAll(t, cc, a.addr)
	waitFor(t, "client in the registry", func() bool { return first.srv.Stats().ConnectedProxies > 0 })

	// The control plane goes away: RPCs keep flowing on the last config.
	first.stop()
	for range 20 {
		if got := call(t, cc); got != a.addr {
			t.Fatalf("while the server is down an RPC reached %s, want %s", got, a.addr)
		}
	}

	// A new control plane on the same port, with the cluster moved to b.
	var lis2 net.Listener
	waitFor(t, "the port free again", func() bool {
		lis2, err = net.Listen("tcp", addr)
		return err == nil
	})
	second := startControlPlane(t, lis2, target, cluster, b.addr)
	converge(t, cc, 10, "traffic on the new server's config", func(got string) bool { return got == b.addr })
	p := proxyByNode(t, second.srv, "restart-client")
	for _, typ := range []string{xds.ListenerType, xds.RouteType, xds.ClusterType} {
		if ts := p.Types[typ]; !ts.Resumed || ts.Pushes != 0 || ts.Resources != 1 || ts.AckedVersion == "" {
			t.Errorf("after the restart %s, unchanged: %+v; want resumed, holding 1 resource, no push", typ, ts)
		}
	}
	if ts := p.Types[xds.EndpointType]; ts.Resumed || ts.Acks == 0 || ts.Nacks != 0 {
		t.Errorf("after the restart %s, changed: %+v; want pushed and ACKed", xds.EndpointType, ts)
	}
	if st := second.srv.Stats(); st.Pushes["lds"]+st.Pushes["rds"]+st.Pushes["cds"] != 0 || st.Resumed["lds"] == 0 || st.Resumed["rds"] == 0 || st.Resumed["cds"] == 0 {
		t.Errorf("new server pushed %v, resumed %v; want only eds pushed", st.Pushes, st.Resumed)
	}
}

// TestFaultAnswerTwice answers one Delta response three times: NACK, ACK,
// NACK. FuzzADS found that each answer is taken: the counters show more
// answers than responses (the fuzzer's input: 1 ACK and 2 NACKs of 1
// push), every repeated NACK logs a warning, and an ACK after a NACK can
// set the registry's AckedVersion to the version the client rejected. Only the first
// answer to a nonce should count. Fix: typeState.answer remembers the
// nonce it took an answer for and ignores further answers to it.
func TestFaultAnswerTwice(t *testing.T) {
	f := newFixture(t)
	f.cds.Set(edsCluster("c0"))
	c := xdstest.NewDelta(t, dial(t, f.addr), &corev3.Node{Id: "twice"})
	c.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.ClusterType, ResourceNamesSubscribe: []string{"*"}})
	r := c.Recv()
	nack := &rpcstatus.Status{Code: 3, Message: "no"}
	c.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.ClusterType, ResponseNonce: r.Nonce, ErrorDetail: nack})
	c.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.ClusterType, ResponseNonce: r.Nonce})
	c.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.ClusterType, ResponseNonce: r.Nonce, ErrorDetail: nack})
	// A subscription change after the answers: once its response comes,
	// the server has handled them.
	f.cds.Set(edsCluster("c1"))
	c.Recv()
	ts := proxyByNode(t, f.srv, "twice").Types[xds.ClusterType]
	if ts.Acks+ts.Nacks > ts.Pushes || ts.Nacks > 1 || ts.Acks > 1 {
		t.Errorf("%d ACKs and %d NACKs of %d pushes; want the first answer to each response only", ts.Acks, ts.Nacks, ts.Pushes)
	}
	if ts.AckedVersion != "" {
		t.Errorf("acked version %q: the client rejected the only response it answered first", ts.AckedVersion)
	}
}

// openLeavers opens n SotW streams on cc that subscribe to big and never
// read, returning the cancel of each; every stream ends with the test.
func openLeavers(t *testing.T, cc grpc.ClientConnInterface, n int) []context.CancelFunc {
	t.Helper()
	var cancels []context.CancelFunc
	for i := range n {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		s, err := discovery.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(&discovery.DiscoveryRequest{Node: &corev3.Node{Id: fmt.Sprintf("leaver-%d", i)}, TypeUrl: xds.EndpointType, ResourceNames: []string{"big"}}); err != nil {
			t.Fatal(err)
		}
		cancels = append(cancels, cancel)
	}
	return cancels
}

// checkAllDisconnected: the registry holds want disconnected proxies,
// each with the time it left.
func checkAllDisconnected(t *testing.T, srv *xds.Server, want int) {
	t.Helper()
	gone := 0
	for _, p := range srv.Proxies() {
		if !p.Connected {
			gone++
			if p.DisconnectedAt.IsZero() {
				t.Errorf("disconnected proxy %s without time", p.NodeID)
			}
		}
	}
	if gone != want {
		t.Fatalf("registry holds %d disconnected proxies, want %d", gone, want)
	}
}
