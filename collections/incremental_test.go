package collections

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"go.uber.org/goleak"

	"github.com/meshd/meshd/internal/leakcheck"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
)

// counters returns, per collection name, its recompute and event counts.
func counters(g *krt.Graph) map[string][2]uint64 {
	out := map[string][2]uint64{}
	for _, c := range g.Describe().Collections {
		out[c.Name] = [2]uint64{c.Recomputes, c.EventsEmitted}
	}
	return out
}

// diffCounters returns the collections whose counters moved between a and
// b, with the deltas.
func diffCounters(a, b map[string][2]uint64) map[string][2]uint64 {
	out := map[string][2]uint64{}
	for name, nb := range b {
		na := a[name]
		if d := [2]uint64{nb[0] - na[0], nb[1] - na[1]}; d != ([2]uint64{}) {
			out[name] = d
		}
	}
	return out
}

// populate adds n services "svc-i" in namespace ns, each with two ports
// and podsPer ready pods.
func populate(in sources.StaticInputs, ns string, n, podsPer int) {
	var svcs []*corev1.Service
	var pods []*corev1.Pod
	for i := range n {
		name := fmt.Sprintf("svc-%d", i)
		sel := map[string]string{"app": name}
		svcs = append(svcs, service(ns, name, sel, svcPort("http", 80, 8080), svcPort("grpc", 9090, 9090)))
		for j := range podsPer {
			ip := fmt.Sprintf("10.%d.%d.%d", i/250, i%250, j+1)
			pods = append(pods, pod(ns, fmt.Sprintf("%s-%d", name, j), ip, sel, true))
		}
	}
	set(in, svcs...)
	set(in, pods...)
}

// splitRoute is the HTTPRoute "ns/split" of svc-0, splitting its traffic
// between port 80 of svc-1 and svc-2 by the weights given.
func splitRoute(w1, w2 int32) *gatewayv1.HTTPRoute {
	return httpRoute("ns", "split", serviceParent("svc-0", nil),
		gatewayv1.HTTPRouteRule{BackendRefs: []gatewayv1.HTTPBackendRef{backend("svc-1", 80, w1), backend("svc-2", 80, w2)}})
}

// moved applies change and returns the counters it moved.
func moved(g *krt.Graph, change func()) map[string][2]uint64 {
	before := counters(g)
	change()
	return diffCounters(before, counters(g))
}

// expectMoved applies change and checks that the counters it moved, and
// only those, moved by want.
func expectMoved(t *testing.T, g *krt.Graph, what string, change func(), want map[string][2]uint64) {
	t.Helper()
	if got := moved(g, change); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: counters moved:\n got %v\nwant %v", what, got, want)
	}
}

func TestChangesAreIncremental(t *testing.T) {
	defer leakcheck.VerifyNone(t, goleak.IgnoreCurrent())
	g, in, m := newTestModel()
	populate(in, "ns", 20, 3)
	in.Set(splitRoute(90, 10))
	if st, _ := m.RouteStatus.Get("HTTPRoute/ns/split"); !st.Parents[0].Accepted() {
		t.Fatalf("route not accepted: %+v", st)
	}

	claEvents := make(chan krt.Batch[Resource[*endpointv3.ClusterLoadAssignment]], 16)
	reg := m.ClusterLoadAssignments.Register(func(b krt.Batch[Resource[*endpointv3.ClusterLoadAssignment]]) { claEvents <- b })
	defer reg.Unregister()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- g.Run(ctx) }()
	defer func() { cancel(); <-done }()

	// The pod's workload, its service's endpoints (one recompute yielding
	// the endpoints of both ports) and the two ports' load assignments;
	// the workload's server listeners move to its new IP (two removed, two
	// added), and the security of its clusters is recomputed, unchanged.
	p := pod("ns", "svc-7-1", "10.0.7.99", map[string]string{"app": "svc-7"}, true)
	expectMoved(t, g, "pod change", func() { in.Set(p) }, map[string][2]uint64{
		"test/pods":              {0, 1},
		"Workloads":              {1, 1},
		"Endpoints":              {1, 2},
		"ClusterLoadAssignments": {2, 2},
		// The load assignments of the services and of the invalid backend
		// cluster, joined.
		"AllClusterLoadAssignments": {2, 2},
		"ClusterSecurity":           {2, 0},
		"ServerListeners":           {1, 4},
		"Listeners":                 {4, 4},
		// The two added are checked for a legacy form: neither has one.
		"LegacyServerListeners": {2, 0},
	})
	checkPodMoveCLAs(t, m, <-claEvents)
	checkSmallChanges(t, g, in)
	validateModel(t, m)
}

// checkPodMoveCLAs checks the load assignment batch of the pod change of
// TestChangesAreIncremental: an update of both ports of svc-7, holding
// the pod's new IP.
func checkPodMoveCLAs(t *testing.T, m *Model, b krt.Batch[Resource[*endpointv3.ClusterLoadAssignment]]) {
	t.Helper()
	var keys []string
	for _, e := range b.Events {
		keys = append(keys, e.Key)
		if e.Type != krt.EventUpdate {
			t.Errorf("event %s on %s, want update", e.Type, e.Key)
		}
	}
	wantKeys := "[outbound|80||svc-7.ns.svc.cluster.local outbound|9090||svc-7.ns.svc.cluster.local]"
	if fmt.Sprint(keys) != wantKeys {
		t.Errorf("CLA events for %v, want %s", keys, wantKeys)
	}
	cla, _ := m.ClusterLoadAssignments.Get("outbound|80||svc-7.ns.svc.cluster.local")
	found := false
	for _, l := range cla.Message().Endpoints {
		for _, e := range l.LbEndpoints {
			found = found || e.GetEndpoint().GetAddress().GetSocketAddress().GetAddress() == "10.0.7.99"
		}
	}
	if !found {
		t.Errorf("new IP missing from CLA: %v", cla.Message())
	}
}

// checkSmallChanges goes on from TestChangesAreIncremental's pod change
// with changes that should touch little.
func checkSmallChanges(t *testing.T, g *krt.Graph, in sources.StaticInputs) {
	t.Helper()
	// A pod that no service selects changes nothing downstream of its
	// workload, and serves no listener.
	expectMoved(t, g, "unselected pod", func() {
		in.Set(pod("ns", "loner", "10.9.9.9", map[string]string{"app": "none"}, true))
	}, map[string][2]uint64{"test/pods": {0, 1}, "Workloads": {1, 1},
		"ServerListeners": {1, 0}})

	// A readiness flip that keeps the IP changes the health status only.
	got := moved(g, func() { in.Set(pod("ns", "svc-3-0", "10.0.3.1", map[string]string{"app": "svc-3"}, false)) })
	if got["Endpoints"] != [2]uint64{1, 2} || got["Clusters"] != ([2]uint64{}) || got["Listeners"] != ([2]uint64{}) {
		t.Errorf("readiness flip: counters moved: %v", got)
	}

	// A route weight change touches the routes of its parent service only:
	// no cluster, load assignment, endpoint or workload.
	expectMoved(t, g, "route change", func() {
		in.Set(splitRoute(0, 100))
	}, map[string][2]uint64{
		"test/httproutes":         {0, 1},
		"HTTPRouteResults":        {1, 1},
		"RouteResults":            {1, 1},
		"RouteStatus":             {1, 0}, // the status is unchanged
		"RouteBindings":           {1, 1},
		"PortRoutes":              {1, 2}, // svc-0 recomputed: both ports changed
		"GRPCRouteConfigurations": {2, 2},
		// The 90/10 split had a legacy form (total_weight); the single
		// backend left has none: two deletions.
		"LegacyGRPCRouteConfigurations": {2, 2},
		"GRPCListeners":                 {2, 0}, // recomputed, equal: no event
		"SidecarRouteConfigurations":    {2, 2},
		"RouteConfigurations":           {4, 4}, // two gRPC, two sidecar
	})
}
