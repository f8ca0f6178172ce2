package collections

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/resolver"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	corev1 "k8s.io/api/core/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
	xds "google.golang.org/grpc/xds"
)

// staticADS answers State-of-the-World ADS requests from a model's
// current state. It pushes only in reply to requests, which suffices for a
// model that does not change during the test; the real server is in xds/.
type staticADS struct {
	discoveryv3.UnimplementedAggregatedDiscoveryServiceServer
	g     *krt.Graph
	m     *Model
	mu    sync.Mutex
	nacks []string
}

// nackList returns the NACKs received so far.
func (s *staticADS) nackList() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.nacks)
}

func (s *staticADS) resources(typeURL string, names []string) []*anypb.Any {
	var all []proto.Message
	var keys []string
	// An empty name list is a wildcard for listeners and clusters only; for
	// routes and endpoints it means "none" (grpc-go sends one while it has
	// no route watch yet, and would reject the Envoy-only sidecar routes).
	wildcard := len(names) == 0 && (typeURL == "type.googleapis.com/envoy.config.listener.v3.Listener" ||
		typeURL == "type.googleapis.com/envoy.config.cluster.v3.Cluster")
	add := func(name string, msg proto.Message) {
		if wildcard || slices.Contains(names, name) {
			all, keys = append(all, msg), append(keys, name)
		}
	}
	s.g.Read(func(snap *krt.Snapshot) {
		switch typeURL {
		case "type.googleapis.com/envoy.config.listener.v3.Listener":
			addAll(s.m.Listeners, snap, add)
		case "type.googleapis.com/envoy.config.route.v3.RouteConfiguration":
			addAll(s.m.RouteConfigurations, snap, add)
		case "type.googleapis.com/envoy.config.cluster.v3.Cluster":
			addAll(s.m.Clusters, snap, add)
		case "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment":
			addAll(s.m.ClusterLoadAssignments, snap, add)
		}
	})
	out := make([]*anypb.Any, len(all))
	for i, m := range all {
		out[i] = mustAny(m)
	}
	return out
}

// addAll hands each resource of c in snap to add.
func addAll[M proto.Message](c krt.Collection[Resource[M]], snap *krt.Snapshot, add func(string, proto.Message)) {
	for _, r := range c.At(snap).List() {
		add(r.Name, r.Message())
	}
}

func (s *staticADS) StreamAggregatedResources(stream discoveryv3.AggregatedDiscoveryService_StreamAggregatedResourcesServer) error {
	sent := map[string]string{}
	nonce := 0
	for {
		req, err := stream.Recv()
		if err != nil {
			return nil
		}
		if req.ErrorDetail != nil {
			s.mu.Lock()
			s.nacks = append(s.nacks, req.TypeUrl+": "+req.ErrorDetail.Message)
			s.mu.Unlock()
			continue
		}
		names := slices.Sorted(slices.Values(req.ResourceNames))
		key := strings.Join(names, ",")
		if prev, ok := sent[req.TypeUrl]; ok && prev == key {
			continue // an ACK of what was sent
		}
		sent[req.TypeUrl] = key
		nonce++
		if err := stream.Send(&discoveryv3.DiscoveryResponse{
			TypeUrl: req.TypeUrl, VersionInfo: "1", Nonce: fmt.Sprint(nonce),
			Resources: s.resources(req.TypeUrl, names),
		}); err != nil {
			return err
		}
	}
}

// serve starts a gRPC server on lis and returns its stop function.
func serve(t *testing.T, lis net.Listener, register func(*grpc.Server)) func() {
	t.Helper()
	s := grpc.NewServer()
	register(s)
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(lis) }()
	return func() { s.Stop(); <-done }
}

// serveHealth serves the gRPC health service on one free port at each of
// ips, until the test ends, and returns the port. It skips the test where
// the loopback aliases are unavailable.
func serveHealth(t *testing.T, ips ...string) int {
	t.Helper()
	port := 0
	for _, ip := range ips {
		l, err := net.Listen("tcp", fmt.Sprintf("%s:%d", ip, port))
		if err != nil {
			t.Skipf("listen %s:%d: %v", ip, port, err)
		}
		port = l.Addr().(*net.TCPAddr).Port
		t.Cleanup(serve(t, l, func(s *grpc.Server) { healthpb.RegisterHealthServer(s, health.NewServer()) }))
	}
	return port
}

// newADSResolver serves m over a staticADS until the test ends and returns
// it with an xDS resolver whose bootstrap points at it.
func newADSResolver(t *testing.T, g *krt.Graph, m *Model) (*staticADS, resolver.Builder) {
	t.Helper()
	ads := &staticADS{g: g, m: m}
	adsLis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(serve(t, adsLis, func(s *grpc.Server) { discoveryv3.RegisterAggregatedDiscoveryServiceServer(s, ads) }))
	bootstrap := fmt.Sprintf(`{"xds_servers":[{"server_uri":%q,"channel_creds":[{"type":"insecure"}],"server_features":["xds_v3"]}],"node":{"id":"test"}}`,
		adsLis.Addr().String())
	r, err := xds.NewXDSResolverWithConfigForTesting([]byte(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	return ads, r
}

// TestGRPCProxylessClient checks the generated resources with grpc-go's
// own xDS client: it must accept every resource (no NACK) and spread RPCs
// over the ready endpoints of the weighted backends of a route.
func TestGRPCProxylessClient(t *testing.T) {
	// Backends: echo on .11 and .12, canary on .13, all on one port.
	port := serveHealth(t, "127.0.0.11", "127.0.0.12", "127.0.0.13")
	g, in, m := newTestModel()
	setProxylessMesh(in, port)
	ads, resolver := newADSResolver(t, g, m)
	for _, tc := range []struct {
		target string
		want   []string
	}{
		{"front.ns.svc.cluster.local:7000", []string{"127.0.0.11", "127.0.0.12", "127.0.0.13"}},
		{"echo.ns.svc.cluster.local:7000", []string{"127.0.0.13"}},
		{"canary.ns.svc.cluster.local:7000", []string{"127.0.0.11", "127.0.0.12"}},
	} {
		t.Run(tc.target, func(t *testing.T) {
			conn, err := grpc.NewClient("xds:///"+tc.target, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithResolvers(resolver))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			hits := healthChecks(t, conn, ads, 90, tc.want)
			if got := slices.Sorted(maps.Keys(hits)); !slices.Equal(got, tc.want) {
				t.Errorf("RPCs reached %v, want each of %v", hits, tc.want)
			}
		})
	}
	if nacks := ads.nackList(); len(nacks) > 0 {
		t.Errorf("the gRPC client rejected resources: %q", nacks)
	}
}

// setProxylessMesh sets three services on port: echo on .11 and .12 (and
// an unready .14), canary on .13, and front. front splits between echo and
// canary; echo sends Health/Check to canary (an exact method match);
// canary sends the Health service to echo (a path prefix, a regular
// expression for gRPC clients).
func setProxylessMesh(in sources.StaticInputs, port int) {
	grpcPort := func(p int) corev1.ServicePort { return svcPort("grpc", 7000, p) }
	in.Set(
		service("ns", "front", map[string]string{"app": "front"}, grpcPort(port)),
		service("ns", "echo", map[string]string{"app": "echo"}, grpcPort(port)),
		service("ns", "canary", map[string]string{"app": "canary"}, grpcPort(port)),
	)
	in.Set(
		pod("ns", "echo-0", "127.0.0.11", map[string]string{"app": "echo"}, true),
		pod("ns", "echo-1", "127.0.0.12", map[string]string{"app": "echo"}, true),
		pod("ns", "echo-2", "127.0.0.14", map[string]string{"app": "echo"}, false), // not ready: never picked
		pod("ns", "canary-0", "127.0.0.13", map[string]string{"app": "canary"}, true),
	)
	in.Set(
		httpRoute("ns", "split", serviceParent("front", nil), gatewayv1.HTTPRouteRule{
			BackendRefs: []gatewayv1.HTTPBackendRef{backend("echo", 7000, 2), backend("canary", 7000, 1)},
		}),
		httpRoute("ns", "back", serviceParent("canary", nil), gatewayv1.HTTPRouteRule{
			Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{
				Type: ptr(gatewayv1.PathMatchPathPrefix), Value: ptr("/grpc.health.v1.Health")}}},
			BackendRefs: []gatewayv1.HTTPBackendRef{backend("echo", 7000, 1)},
		}),
	)
	in.Set(grpcRoute("ns", "check", serviceParent("echo", ptr(int32(7000))), gatewayv1.GRPCRouteRule{
		Matches: []gatewayv1.GRPCRouteMatch{{Method: &gatewayv1.GRPCMethodMatch{
			Service: ptr("grpc.health.v1.Health"), Method: ptr("Check")}}},
		BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: backendRef("canary", 7000, 1)}},
	}))
}

// healthChecks sends health checks over conn, at least n, until every
// backend in want has answered one (round robin picks only the backends
// whose connections are up, so the first RPCs may all reach one), and
// counts the backends they reached, by IP. A failed RPC fails the test
// with ads's NACKs; so does a backend of want never reached in 20 s.
func healthChecks(t *testing.T, conn *grpc.ClientConn, ads *staticADS, n int, want []string) map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	hits := map[string]int{}
	reachedAll := func() bool {
		return !slices.ContainsFunc(want, func(h string) bool { return hits[h] == 0 })
	}
	for sent := 0; sent < n || !reachedAll(); sent++ {
		var p peer.Peer
		if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Peer(&p), grpc.WaitForReady(true)); err != nil {
			t.Fatalf("RPC %d: %v (reached %v, NACKs: %q)", sent, err, hits, ads.nackList())
		}
		host, _, _ := net.SplitHostPort(p.Addr.String())
		hits[host]++
	}
	return hits
}
