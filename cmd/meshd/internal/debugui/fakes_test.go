package debugui

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/meshd/meshd/cmd/meshd/internal/problem"
	"github.com/meshd/meshd/sources/multicluster"
)

// fakeProxies is a registry of two proxies: web-1 is up to date, api-1
// rejected its latest cluster push.
type fakeProxies struct {
	mu      sync.Mutex
	proxies []ProxyStatus
}

const nackReason = "cluster outbound|api.default.svc.cluster.local: unsupported lb_policy RING_HASH_V2"

func newFakeProxies(now time.Time) *fakeProxies {
	acked := func(typ, v string) TypeStatus {
		return TypeStatus{TypeURL: "type.googleapis.com/envoy.config." + typ, Wildcard: true, SentVersion: v, AckedVersion: v,
			SentNonce: "n-" + v, LastAck: now.Add(-30 * time.Second)}
	}
	rejected := acked("cluster.v3.Cluster", "v6")
	rejected.SentVersion, rejected.SentNonce = "v7", "n-v7"
	rejected.LastNACK = &NACK{Time: now.Add(-5 * time.Second), Version: "v7", Nonce: "n-v7", Reason: nackReason}
	return &fakeProxies{proxies: []ProxyStatus{
		{
			NodeID: "sidecar~10.0.0.1~web-01.default~default.svc.cluster.local", Cluster: "web", Address: "127.0.0.1:50001",
			Protocol: "delta", State: ProxyConnected, ConnectedSince: now.Add(-10 * time.Minute), LastPush: now.Add(-30 * time.Second),
			Types: []TypeStatus{acked("cluster.v3.Cluster", "v7"), acked("endpoint.v3.ClusterLoadAssignment", "v7"),
				acked("listener.v3.Listener", "v7"), acked("route.v3.RouteConfiguration", "v7")},
		},
		{
			NodeID: "sidecar~10.0.0.2~api-02.default~default.svc.cluster.local", Cluster: "api", Address: "127.0.0.1:50002",
			Protocol: "sotw", Variant: "grpc-legacy", State: ProxyConnected, ConnectedSince: now.Add(-8 * time.Minute), LastPush: now.Add(-6 * time.Second),
			Types: []TypeStatus{rejected, acked("endpoint.v3.ClusterLoadAssignment", "v7"),
				acked("listener.v3.Listener", "v7"), acked("route.v3.RouteConfiguration", "v7")},
		},
	}}
}

func (f *fakeProxies) Proxies() []ProxyStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ProxyStatus(nil), f.proxies...)
}

func (f *fakeProxies) ConfigDump(nodeID string) (any, error) {
	for _, p := range f.Proxies() {
		if p.NodeID == nodeID {
			return map[string]any{"node": nodeID, "clusters": []string{"outbound|web.default.svc.cluster.local"}}, nil
		}
	}
	return nil, fmt.Errorf("proxy %q: %w", nodeID, ErrNotFound)
}

// set replaces the registry, as a connect or disconnect would. It keeps a
// copy, so the caller may go on changing ps.
func (f *fakeProxies) set(ps []ProxyStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.proxies = append([]ProxyStatus(nil), ps...)
}

type fakeProblems []problem.Problem

func (f fakeProblems) Problems() []problem.Problem { return f }

func newFakeProblems(now time.Time) fakeProblems {
	return fakeProblems{{Source: "config/routes.yaml", Object: "HTTPRoute shop/broken", Error: "yaml: line 7: mapping values are not allowed in this context", Since: now.Add(-2 * time.Minute)}}
}

// fakeReplica is a replica's view of a leader election that a test can
// change, as a lost or won Lease would.
type fakeReplica struct {
	mu sync.Mutex
	r  Replica
}

func newFakeReplica(r Replica) *fakeReplica { return &fakeReplica{r: r} }

func (f *fakeReplica) get() Replica {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.r
}

func (f *fakeReplica) set(r Replica) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.r = r
}

// fakeClusters is the status of three remote clusters: west synced, east
// stale since a minute, north still syncing past its timeout.
type fakeClusters struct {
	mu sync.Mutex
	cs []multicluster.ClusterStatus
}

func newFakeClusters(now time.Time) *fakeClusters {
	objects := multicluster.ObjectCounts{Services: 12, Pods: 40, EndpointSlices: 12, Nodes: 3}
	return &fakeClusters{cs: []multicluster.ClusterStatus{
		{Name: "east", Origin: "secret meshd-system/remote-east", State: multicluster.StateStale, Generation: 1,
			Since: now.Add(-time.Hour), Objects: objects, HealthSnapshot: multicluster.HealthSnapshot{
				LastList: now.Add(-time.Hour), LastWatch: now.Add(-2 * time.Minute), FailingSince: now.Add(-time.Minute),
				LastError: "dial tcp 127.0.0.9:6443: connect: connection refused", LastErrorAt: now, Errors: 7, ConsecutiveErrors: 7}},
		{Name: "north", Origin: "--remote-kubeconfig", State: multicluster.StateSyncing, Generation: 1, SyncTimedOut: true,
			Since: now.Add(-time.Minute), HealthSnapshot: multicluster.HealthSnapshot{
				LastError: "GET /api/v1/pods: 403 Forbidden", LastErrorAt: now, FailingSince: now.Add(-time.Minute), Errors: 3, ConsecutiveErrors: 3}},
		{Name: "west", Origin: "secret meshd-system/remote-west", State: multicluster.StateSynced, Generation: 2,
			Since: now.Add(-time.Hour), Objects: objects, HealthSnapshot: multicluster.HealthSnapshot{
				LastList: now.Add(-30 * time.Minute), LastWatch: now.Add(-time.Second)}},
	}}
}

func (f *fakeClusters) get() []multicluster.ClusterStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.cs)
}

// setState sets the state of the cluster name.
func (f *fakeClusters) setState(name string, s multicluster.State) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.cs {
		if f.cs[i].Name == name {
			f.cs[i].State = s
		}
	}
}
