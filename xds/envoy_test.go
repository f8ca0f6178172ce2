package xds_test

import (
	"slices"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest/envoysim"
)

// envoyProtocols runs f once per protocol with a constructor of
// Envoy-like proxies on it.
func envoyProtocols(t *testing.T, f func(t *testing.T, open func(grpc.ClientConnInterface, string, ...envoysim.Option) *envoysim.Envoy)) {
	for _, p := range []envoysim.Protocol{envoysim.SotW, envoysim.Delta} {
		t.Run(p.String(), func(t *testing.T) {
			f(t, func(cc grpc.ClientConnInterface, id string, opts ...envoysim.Option) *envoysim.Envoy {
				return envoysim.New(t, p, cc, envoysim.Node(id), opts...)
			})
		})
	}
}

// envoyFixture serves two clusters with their load assignments, and a
// listener whose route sends everything to c0.
func envoyFixture(t *testing.T, opts ...xds.Option) *fixture {
	f := newFixture(t, opts...)
	f.cds.Set(envoyCluster("c0", time.Second), envoyCluster("c1", time.Second))
	f.eds.Set(cla("c0", "127.0.0.1:1"), cla("c1", "127.0.0.2:1"))
	f.lds.Set(envoyListener("l0", 8080, "r0"))
	f.rds.Set(weightedRoute("r0", "*", []string{"c0"}, []uint32{1}))
	return f
}

// TestEnvoyRules drives the server, over real gRPC, through a proxy that
// behaves as Envoy and fails the test on any rule Envoy relies on that
// the server breaks: every update of a cluster or a listener must be
// followed by what it warms on, in order, on either protocol.
func TestEnvoyRules(t *testing.T) {
	envoyProtocols(t, func(t *testing.T, open func(grpc.ClientConnInterface, string, ...envoysim.Option) *envoysim.Envoy) {
		f := envoyFixture(t)
		e := open(dial(t, f.addr), "envoy-0", envoysim.WarmListenersOnRoutes())
		e.Await("the first config", func(c *envoysim.Config) bool {
			return c.Listeners["l0"] != nil && c.Routes["r0"] != nil && len(c.ClusterEndpoints("c1")) == 1
		})
		e.Settle()

		// A cluster update warms until its load assignment comes again.
		f.cds.Set(envoyCluster("c0", 2*time.Second))
		e.Await("c0 updated", func(c *envoysim.Config) bool {
			return c.Clusters["c0"].GetConnectTimeout().AsDuration() == 2*time.Second
		})
		if got := e.Stats().Unchanged[xds.EndpointType]; got != 1 {
			t.Errorf("unchanged load assignments resent: %d, want 1 (c0's)", got)
		}
		f.eds.Set(cla("c0", "127.0.0.1:1", "127.0.0.3:1"))
		e.Await("c0 has two endpoints", func(c *envoysim.Config) bool { return len(c.ClusterEndpoints("c0")) == 2 })

		// A listener update warms until its routes come again; a route
		// change is applied as it comes.
		f.lds.Set(envoyListener("l0", 8081, "r0"))
		e.Await("l0 on 8081", func(c *envoysim.Config) bool {
			return c.Listeners["l0"].GetAddress().GetSocketAddress().GetPortValue() == 8081
		})
		f.rds.Set(weightedRoute("r0", "*", []string{"c1"}, []uint32{1}))
		e.Await("r0 to c1", func(c *envoysim.Config) bool { return slices.Equal(c.RouteClusters("r0"), []string{"c1"}) })

		// A removed service: its cluster goes, and the proxy drops its
		// load assignment.
		f.cds.Delete("c0")
		f.eds.Delete("c0")
		e.Await("c0 gone", func(c *envoysim.Config) bool { return c.Clusters["c0"] == nil && c.Endpoints["c0"] == nil })
		e.Settle()
	})
}

// envoyCluster is an EDS cluster as Envoy takes it.
func envoyCluster(name string, connect time.Duration) *clusterv3.Cluster {
	c := edsCluster(name)
	c.ConnectTimeout = durationpb.New(connect)
	return c
}

// envoyListener is a sidecar listener on port whose HTTP connection
// manager takes route over RDS.
func envoyListener(name string, port uint32, route string) *listenerv3.Listener {
	return &listenerv3.Listener{
		Name: name,
		Address: &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
			Address: "0.0.0.0", PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port},
		}}},
		FilterChains: []*listenerv3.FilterChain{{Filters: []*listenerv3.Filter{{
			Name:       "envoy.filters.network.http_connection_manager",
			ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: rdsConnectionManager(route)},
		}}}},
	}
}

// awaitResumed waits for the server to count n types resumed in all.
func awaitResumed(t *testing.T, srv *xds.Server, n uint64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var got uint64
		for _, v := range srv.Stats().Resumed {
			got += v
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server resumed %d types, want %d", got, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestEnvoyWarmingForEnvoyOnly serves with WithWarmingFor(EnvoyNode): an
// Envoy is sent again what an updated cluster waits for, and settles; a
// client naming another user agent is not, so a proxy warming as Envoy
// does behind that name is left warming, and says so.
func TestEnvoyWarmingForEnvoyOnly(t *testing.T) {
	f := envoyFixture(t, xds.WithWarmingFor(xds.EnvoyNode))
	cc := dial(t, f.addr)
	envoy := envoysim.New(t, envoysim.Delta, cc, envoysim.Node("envoy-0"))
	var overdue []envoysim.Violation
	node := envoysim.Node("grpc-0")
	node.UserAgentName = "grpc-go"
	other := envoysim.New(t, envoysim.Delta, cc, node, envoysim.WithWarmingLimit(time.Second),
		envoysim.OnViolation(func(v envoysim.Violation) { overdue = append(overdue, v) }))
	for _, e := range []*envoysim.Envoy{envoy, other} {
		e.Await("the first config", func(c *envoysim.Config) bool { return c.Routes["r0"] != nil })
		e.Settle()
	}

	f.cds.Set(envoyCluster("c0", 2*time.Second))
	envoy.Await("c0 updated", func(c *envoysim.Config) bool {
		return c.Clusters["c0"].GetConnectTimeout().AsDuration() == 2*time.Second
	})
	other.Await("c0 reported warming", func(*envoysim.Config) bool { return len(overdue) > 0 })
	if overdue[0].Rule != envoysim.RuleWarmingOverdue || overdue[0].Name != "c0" {
		t.Errorf("violations: %v, want c0 warming overdue", overdue)
	}
	if got := other.Stats().Unchanged[xds.EndpointType]; got != 0 {
		t.Errorf("unchanged load assignments sent to the gRPC client: %d, want 0", got)
	}
}
