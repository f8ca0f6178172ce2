package xds_test

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"google.golang.org/grpc"

	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest/envoysim"
)

// onDemand tells the clusters served only to the streams naming them, as
// on-demand CDS serves them beside a proxy's wildcard.
func onDemand(c *clusterv3.Cluster) bool { return strings.HasPrefix(c.GetName(), "od-") }

// TestEnvoyOnDemand subscribes, on one stream, to names of the Cluster
// type beside the proxy's wildcard of it, and drops them again, on either
// protocol: a name the wildcard leaves out comes, cluster before its load
// assignment, and goes once dropped; a name the wildcard holds stays
// after it is dropped; leaving the wildcard keeps only the names asked
// for, and taking it again brings the rest back.
func TestEnvoyOnDemand(t *testing.T) {
	envoyProtocols(t, func(t *testing.T, open func(grpc.ClientConnInterface, string, ...envoysim.Option) *envoysim.Envoy) {
		f := newFixtureWith(t, []xds.SourceOption[*clusterv3.Cluster]{xds.WithNamedOnly(onDemand)})
		f.cds.Set(envoyCluster("c0", time.Second), envoyCluster("c1", time.Second), envoyCluster("od-a", time.Second))
		f.eds.Set(cla("c0", "127.0.0.1:1"), cla("c1", "127.0.0.2:1"), cla("od-a", "127.0.0.5:1"))
		e := open(dial(t, f.addr), "envoy-0")
		e.Await("the wildcard's clusters", func(c *envoysim.Config) bool {
			return len(c.ClusterEndpoints("c0")) == 1 && len(c.ClusterEndpoints("c1")) == 1
		})
		e.Settle()
		wantClusters(t, e, "through the wildcard", "c0", "c1")

		e.Subscribe(envoysim.ClusterType, "od-a")
		e.Await("od-a on demand", func(c *envoysim.Config) bool { return len(c.ClusterEndpoints("od-a")) == 1 })
		e.Settle()
		f.cds.Set(envoyCluster("od-a", 2*time.Second))
		e.Await("od-a updated", func(c *envoysim.Config) bool {
			return c.Clusters["od-a"].GetConnectTimeout().AsDuration() == 2*time.Second
		})
		e.Settle()
		e.Unsubscribe(envoysim.ClusterType, "od-a")
		e.Await("od-a gone", func(c *envoysim.Config) bool { return c.Clusters["od-a"] == nil && c.Endpoints["od-a"] == nil })
		e.Settle()

		// c0 named beside the wildcard, then dropped: the wildcard keeps it.
		e.Subscribe(envoysim.ClusterType, "c0")
		awaitSubscribed(t, f.srv, e, "envoy-0", true, "c0")
		e.Unsubscribe(envoysim.ClusterType, "c0")
		awaitSubscribed(t, f.srv, e, "envoy-0", true)
		e.Settle()
		wantClusters(t, e, "after dropping c0 beside the wildcard", "c0", "c1")

		leaveAndRejoinWildcard(t, f, e)
	})
}

// leaveAndRejoinWildcard names c1, drops the wildcard and then takes it
// again: meanwhile the proxy holds c1 alone and is sent no change of c0
// (the proxy reports one as RuleUnrequested).
func leaveAndRejoinWildcard(t *testing.T, f *fixture, e *envoysim.Envoy) {
	t.Helper()
	e.Subscribe(envoysim.ClusterType, "c1")
	e.Unsubscribe(envoysim.ClusterType, "*")
	wantClusters(t, e, "without the wildcard", "c1")
	awaitSubscribed(t, f.srv, e, "envoy-0", false, "c1")
	f.cds.Set(envoyCluster("c0", 3*time.Second), envoyCluster("c1", 3*time.Second))
	e.Await("c1 updated", func(c *envoysim.Config) bool {
		return c.Clusters["c1"].GetConnectTimeout().AsDuration() == 3*time.Second
	})
	e.Settle()
	wantClusters(t, e, "without the wildcard after a change of c0", "c1")

	e.Subscribe(envoysim.ClusterType, "*")
	e.Await("c0 back", func(c *envoysim.Config) bool {
		return c.Clusters["c0"].GetConnectTimeout().AsDuration() == 3*time.Second && len(c.ClusterEndpoints("c0")) == 1
	})
	e.Settle()
	wantClusters(t, e, "with the wildcard again", "c0", "c1")
}

// wantClusters checks the proxy's active clusters.
func wantClusters(t *testing.T, e *envoysim.Envoy, when string, want ...string) {
	t.Helper()
	if got := slices.Sorted(maps.Keys(e.Config().Clusters)); !slices.Equal(got, want) {
		t.Fatalf("clusters %s: %v, want %v", when, got, want)
	}
}

// awaitSubscribed waits, the proxy answering what comes, until the
// server has read its cluster subscription as wildcard and names, and
// the proxy has read every cluster response the server sent it by then:
// the server builds a request's response in the step that applies the
// request, so the answer to the change is among them. (A SotW server
// skips a request naming an older response's nonce: the proxy's answer
// to the newer one carries the subscription.)
func awaitSubscribed(t *testing.T, srv *xds.Server, e *envoysim.Envoy, node string, wildcard bool, names ...string) {
	t.Helper()
	e.Await("the server reads the cluster subscription", func(*envoysim.Config) bool {
		ts := proxyByNode(t, srv, node).Types[xds.ClusterType]
		return ts.Wildcard == wildcard && slices.Equal(ts.Subscribed, names) &&
			uint64(e.Stats().Responses[xds.ClusterType]) >= ts.Pushes
	})
}
