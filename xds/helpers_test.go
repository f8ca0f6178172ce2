package xds_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshd/meshd/internal/leakcheck"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/xds"
)

func TestMain(m *testing.M) {
	leakcheck.VerifyTestMain(m)
}

// fixture is a graph of four static proto collections served by a server
// on 127.0.0.1.
type fixture struct {
	g *krt.Graph
	resources
	srv  *xds.Server
	addr string
}

// resources are four static proto collections, one per xDS type.
type resources struct {
	lds krt.Static[*listenerv3.Listener]
	rds krt.Static[*routev3.RouteConfiguration]
	cds krt.Static[*clusterv3.Cluster]
	eds krt.Static[*endpointv3.ClusterLoadAssignment]
}

func staticProtos[T interface {
	proto.Message
	GetName() string
}](g *krt.Graph, name string) krt.Static[T] {
	return krt.NewStatic[T](g, krt.WithName(name),
		krt.WithKey(func(m T) string { return m.GetName() }),
		krt.WithEquals(func(a, b T) bool { return proto.Equal(a, b) }))
}

func newResources(g *krt.Graph) resources {
	return resources{
		lds: staticProtos[*listenerv3.Listener](g, "listeners"),
		rds: staticProtos[*routev3.RouteConfiguration](g, "routes"),
		cds: staticProtos[*clusterv3.Cluster](g, "clusters"),
		eds: krt.NewStatic[*endpointv3.ClusterLoadAssignment](g, krt.WithName("endpoints"),
			krt.WithKey(func(m *endpointv3.ClusterLoadAssignment) string { return m.GetClusterName() }),
			krt.WithEquals(func(a, b *endpointv3.ClusterLoadAssignment) bool { return proto.Equal(a, b) })),
	}
}

// sources are rs as a server's sources, one per type; the cluster source
// takes clusterOpts.
func (rs resources) sources(clusterOpts ...xds.SourceOption[*clusterv3.Cluster]) []xds.Source {
	return []xds.Source{
		xds.NewSource(xds.ListenerType, rs.lds, func(l *listenerv3.Listener) (string, proto.Message) { return l.GetName(), l }),
		xds.NewSource(xds.RouteType, rs.rds, func(r *routev3.RouteConfiguration) (string, proto.Message) { return r.GetName(), r }),
		xds.NewSource(xds.ClusterType, rs.cds, func(c *clusterv3.Cluster) (string, proto.Message) { return c.GetName(), c }, clusterOpts...),
		xds.NewSource(xds.EndpointType, rs.eds, func(c *endpointv3.ClusterLoadAssignment) (string, proto.Message) {
			return c.GetClusterName(), c
		}),
	}
}

func newFixture(t testing.TB, opts ...xds.Option) *fixture {
	t.Helper()
	return newFixtureWith(t, nil, opts...)
}

// newFixtureWith is newFixture whose cluster source takes clusterOpts.
func newFixtureWith(t testing.TB, clusterOpts []xds.SourceOption[*clusterv3.Cluster], opts ...xds.Option) *fixture {
	t.Helper()
	g := krt.NewGraph()
	f := &fixture{g: g, resources: newResources(g)}
	f.srv = xds.New(g, f.sources(clusterOpts...), append([]xds.Option{xds.WithDebounce(0)}, opts...)...)
	f.addr = serve(t, g, f.srv)
	return f
}

// synced waits until the server holds every write to the graph so far:
// its handler applies them apart from Set, so a stream opened at once
// could be answered from the state before them.
func (f *fixture) synced(t testing.TB) {
	t.Helper()
	v := f.g.Version()
	waitFor(t, "the server to hold the graph's writes", func() bool { return f.srv.Stats().CacheVersion >= v })
}

// newWalkFixture is the fixture of the protocol walks: clusters a and b,
// and the CLAs of a, b and c.
func newWalkFixture(t testing.TB) *fixture {
	t.Helper()
	f := newFixture(t)
	f.cds.Set(edsCluster("a"), edsCluster("b"))
	f.eds.Set(cla("a", "10.0.0.1:80"), cla("b", "10.0.0.2:80"), cla("c", "10.0.0.3:80"))
	// The walks' first responses must carry these: a stream opened
	// before the server holds them is answered, correctly, without them.
	f.synced(t)
	return f
}

// start runs g and srv on lis (and the plaintext listeners) until stop,
// which checks that both returned; stop may be called more than once.
func start(t testing.TB, g *krt.Graph, srv *xds.Server, lis net.Listener, plaintext ...net.Listener) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	graphDone, serveDone := make(chan error, 1), make(chan error, 1)
	go func() { graphDone <- g.Run(ctx) }()
	go func() { serveDone <- srv.Serve(ctx, lis, plaintext...) }()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			if err := <-serveDone; err != nil {
				t.Errorf("Serve: %v", err)
			}
			if err := <-graphDone; !errors.Is(err, context.Canceled) {
				t.Errorf("graph Run: %v", err)
			}
		})
	}
}

// serve runs g and srv on a loopback port (and the plaintext listeners)
// until the test ends, and checks that both return.
func serve(t testing.TB, g *krt.Graph, srv *xds.Server, plaintext ...net.Listener) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(start(t, g, srv, lis, plaintext...))
	select {
	case <-srv.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("server not ready")
	}
	return lis.Addr().String()
}

func insecureCreds() credentials.TransportCredentials { return insecure.NewCredentials() }

func dial(t testing.TB, addr string) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// recvTimeout guards a test against a response that never comes.
const recvTimeout = 10 * time.Second

// names returns the resource names of a SotW response, by decoding each
// resource.
func names(t testing.TB, r *discovery.DiscoveryResponse) []string {
	t.Helper()
	var out []string
	for _, a := range r.Resources {
		out = append(out, resourceName(t, a))
	}
	return out
}

func deltaNames(t testing.TB, r *discovery.DeltaDiscoveryResponse) []string {
	t.Helper()
	var out []string
	for _, res := range r.Resources {
		if got := resourceName(t, res.Resource); got != res.Name {
			t.Fatalf("delta resource name %q holds %q", res.Name, got)
		}
		out = append(out, res.Name)
	}
	return out
}

// recvNames receives one response with recv and checks the names it
// carries (read by names) against want; what names the response in the
// failure.
func recvNames[Resp any](t testing.TB, recv func() *Resp, names func(testing.TB, *Resp) []string, what string, want ...string) *Resp {
	t.Helper()
	r := recv()
	if got := names(t, r); !slices.Equal(got, want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
	return r
}

func resourceName(t testing.TB, a *anypb.Any) string {
	t.Helper()
	m, err := a.UnmarshalNew()
	if err != nil {
		t.Fatalf("unmarshal %s: %v", a.TypeUrl, err)
	}
	switch m := m.(type) {
	case *listenerv3.Listener:
		return m.Name
	case *routev3.RouteConfiguration:
		return m.Name
	case *clusterv3.Cluster:
		return m.Name
	case *endpointv3.ClusterLoadAssignment:
		return m.ClusterName
	}
	t.Fatalf("unexpected resource %T", m)
	return ""
}

// claOf decodes the CLA named name from a SotW response.
func claOf(t testing.TB, anys []*anypb.Any, name string) *endpointv3.ClusterLoadAssignment {
	t.Helper()
	for _, a := range anys {
		var cla endpointv3.ClusterLoadAssignment
		if err := a.UnmarshalTo(&cla); err != nil {
			t.Fatal(err)
		}
		if cla.ClusterName == name {
			return &cla
		}
	}
	return nil
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}

// Resource builders: what a gRPC proxyless client needs for one service.

func adsSource() *corev3.ConfigSource {
	return &corev3.ConfigSource{
		ResourceApiVersion:    corev3.ApiVersion_V3,
		ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}},
	}
}

func edsCluster(name string) *clusterv3.Cluster {
	return &clusterv3.Cluster{
		Name:                 name,
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS},
		EdsClusterConfig:     &clusterv3.Cluster_EdsClusterConfig{EdsConfig: adsSource()},
		LbPolicy:             clusterv3.Cluster_ROUND_ROBIN,
	}
}

func cla(name string, addrs ...string) *endpointv3.ClusterLoadAssignment {
	var lbs []*endpointv3.LbEndpoint
	for _, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			panic(err)
		}
		var p uint32
		for _, ch := range port {
			p = p*10 + uint32(ch-'0')
		}
		lbs = append(lbs, &endpointv3.LbEndpoint{
			HealthStatus: corev3.HealthStatus_HEALTHY,
			HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
				Address: &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
					Address:       host,
					PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: p},
				}}},
			}},
		})
	}
	return &endpointv3.ClusterLoadAssignment{
		ClusterName: name,
		Endpoints: []*endpointv3.LocalityLbEndpoints{{
			Locality:            &corev3.Locality{},
			LoadBalancingWeight: wrapperspb.UInt32(1),
			LbEndpoints:         lbs,
		}},
	}
}

func apiListener(name, route string) *listenerv3.Listener {
	return &listenerv3.Listener{Name: name, ApiListener: &listenerv3.ApiListener{ApiListener: rdsConnectionManager(route)}}
}

// rdsConnectionManager is an HTTP connection manager, packed, that takes
// route over ADS and ends in the router.
func rdsConnectionManager(route string) *anypb.Any {
	router, err := anypb.New(&routerv3.Router{})
	if err != nil {
		panic(err)
	}
	hcm, err := anypb.New(&hcmv3.HttpConnectionManager{
		StatPrefix: route,
		RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{
			ConfigSource:    adsSource(),
			RouteConfigName: route,
		}},
		HttpFilters: []*hcmv3.HttpFilter{{
			Name:       "envoy.filters.http.router",
			ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: router},
		}},
	})
	if err != nil {
		panic(err)
	}
	return hcm
}

// weightedRoute routes every request for domain to clusters with the
// given weights (a weight of 0 is dropped).
func weightedRoute(name, domain string, clusters []string, weights []uint32) *routev3.RouteConfiguration {
	var wcs []*routev3.WeightedCluster_ClusterWeight
	for i, c := range clusters {
		if weights[i] == 0 {
			continue
		}
		wcs = append(wcs, &routev3.WeightedCluster_ClusterWeight{Name: c, Weight: wrapperspb.UInt32(weights[i])})
	}
	action := &routev3.RouteAction{}
	if len(wcs) == 1 {
		action.ClusterSpecifier = &routev3.RouteAction_Cluster{Cluster: wcs[0].Name}
	} else {
		action.ClusterSpecifier = &routev3.RouteAction_WeightedClusters{WeightedClusters: &routev3.WeightedCluster{Clusters: wcs}}
	}
	return &routev3.RouteConfiguration{
		Name: name,
		VirtualHosts: []*routev3.VirtualHost{{
			Name:    name,
			Domains: []string{domain},
			Routes: []*routev3.Route{{
				Match:  &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
				Action: &routev3.Route_Route{Route: action},
			}},
		}},
	}
}
