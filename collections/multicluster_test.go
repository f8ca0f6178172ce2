package collections

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/meshd/meshd/krt/krttest"
	"github.com/meshd/meshd/sources"
)

// remote marks o as read from cluster, as a remote cluster's source does.
func remote[T interface{ SetAnnotations(map[string]string) }](cluster string, o T) T {
	o.SetAnnotations(map[string]string{sources.AnnotationCluster: cluster})
	return o
}

// TestServiceAcrossClusters has a pod of the same name in the local
// cluster and in a remote one, on nodes of the same name: both are
// workloads of the one service, each endpoint in its own cluster's
// locality, each workload with its own identity.
func TestServiceAcrossClusters(t *testing.T) {
	_, in, m := newTestModel()
	app := map[string]string{"app": "web"}
	localPod, westPod := pod("ns", "web-0", "10.0.0.1", app, true), remote("west", pod("ns", "web-0", "10.1.0.1", app, true))
	localPod.Spec.NodeName, westPod.Spec.NodeName = "n1", "n1"
	localPod.Spec.ServiceAccountName, westPod.Spec.ServiceAccountName = "web", "web-west"
	in.Set(service("ns", "web", app, svcPort("grpc", 80, 8080)), localPod, westPod,
		node("n1", map[string]string{LabelTopologyZone: "z-local"}),
		remote("west", node("n1", map[string]string{LabelTopologyZone: "z-west"})))

	if got := krttest.Keys(m.Workloads); !slices.Equal(got, []string{"ns/web-0", "west/ns/web-0"}) {
		t.Fatalf("workloads = %v, want the local and the remote pod", got)
	}
	eps, ok := m.Endpoints.Get(ClusterName(80, "web.ns.svc.cluster.local"))
	if !ok {
		t.Fatal("no endpoints for web:80")
	}
	want := []Endpoint{
		{IP: "10.0.0.1", Port: 8080, Healthy: true, Locality: Locality{Zone: "z-local"}, Workload: "ns/web-0"},
		{IP: "10.1.0.1", Port: 8080, Healthy: true, Locality: Locality{Zone: "z-west", Cluster: "west"}, Workload: "west/ns/web-0"},
	}
	if !slices.Equal(eps.Endpoints, want) {
		t.Errorf("endpoints:\n got %+v\nwant %+v", eps.Endpoints, want)
	}
	checkSecurityAcrossClusters(t, m)
}

// checkSecurityAcrossClusters checks, for TestServiceAcrossClusters, that
// each pod has its own security, under its workload's key, and that the
// service's clients accept the identities of both.
func checkSecurityAcrossClusters(t *testing.T, m *Model) {
	t.Helper()
	for key, sa := range map[string]string{"ns/web-0": "web", "west/ns/web-0": "web-west"} {
		if sec, ok := m.WorkloadSecurity(key); !ok || sec.ResourceName() != key || sec.ServiceAccount != sa {
			t.Errorf("workload security of %s = %+v, %v; want its own, of account %s", key, sec, ok, sa)
		}
	}
	cs, _ := m.ClusterSecurity.Get(ClusterName(80, "web.ns.svc.cluster.local"))
	if want := []string{"spiffe://cluster.local/ns/ns/sa/web", "spiffe://cluster.local/ns/ns/sa/web-west"}; !slices.Equal(cs.SANs, want) {
		t.Errorf("cluster SANs = %q, want %q", cs.SANs, want)
	}
}

// TestNamedLocalCluster names the local cluster: its endpoints are in
// that cluster's localities, in the model and in xDS, while its workloads
// keep their plain keys.
func TestNamedLocalCluster(t *testing.T) {
	_, in, m := newTestModel(WithClusterName("home"))
	app := map[string]string{"app": "web"}
	in.Set(service("ns", "web", app, svcPort("grpc", 80, 8080)), pod("ns", "web-0", "10.0.0.1", app, true),
		remote("west", pod("ns", "web-0", "10.1.0.1", app, true)))

	if got := krttest.Keys(m.Workloads); !slices.Equal(got, []string{"ns/web-0", "west/ns/web-0"}) {
		t.Fatalf("workloads = %v, want the local pod under its plain key", got)
	}
	name := ClusterName(80, "web.ns.svc.cluster.local")
	eps, _ := m.Endpoints.Get(name)
	var got []string
	for _, e := range eps.Endpoints {
		got = append(got, e.IP+" "+e.Locality.String())
	}
	if want := []string{"10.0.0.1 @home", "10.1.0.1 @west"}; !slices.Equal(got, want) {
		t.Errorf("endpoints' localities = %q, want %q", got, want)
	}
	cla, ok := m.ClusterLoadAssignments.Get(name)
	if !ok {
		t.Fatal("no load assignment for web:80")
	}
	var subZones []string
	for _, l := range cla.Message().Endpoints {
		subZones = append(subZones, l.Locality.SubZone)
	}
	if want := []string{"@home", "@west"}; !slices.Equal(subZones, want) {
		t.Errorf("xDS sub-zones = %q, want %q", subZones, want)
	}
}

// TestStaleClusterEndpoints flags the endpoints of a remote cluster stale
// while it is (sources.StaleCluster) and clears the flag after, with no
// change to what xDS serves.
func TestStaleClusterEndpoints(t *testing.T) {
	_, in, m := newTestModel()
	app := map[string]string{"app": "web"}
	in.Set(service("ns", "web", app, svcPort("grpc", 80, 8080)), pod("ns", "web-0", "10.0.0.1", app, true),
		remote("west", pod("ns", "web-0", "10.1.0.1", app, true)), remote("east", pod("ns", "web-0", "10.2.0.1", app, true)))
	name := ClusterName(80, "web.ns.svc.cluster.local")
	staleOf := func() map[string]bool {
		eps, _ := m.Endpoints.Get(name)
		out := map[string]bool{}
		for _, e := range eps.Endpoints {
			out[e.IP] = e.Stale
		}
		return out
	}
	before, _ := m.ClusterLoadAssignments.Get(name)
	for _, step := range []struct {
		what  string
		write func()
		want  map[string]bool
	}{
		{"none stale", func() {}, map[string]bool{"10.0.0.1": false, "10.1.0.1": false, "10.2.0.1": false}},
		{"west stale", func() { in.Set(sources.StaleCluster{Name: "west", Since: time.Unix(100, 0)}) },
			map[string]bool{"10.0.0.1": false, "10.1.0.1": true, "10.2.0.1": false}},
		{"west answers", func() { in.Delete(sources.StaleCluster{Name: "west"}) },
			map[string]bool{"10.0.0.1": false, "10.1.0.1": false, "10.2.0.1": false}},
	} {
		step.write()
		if got := staleOf(); !maps.Equal(got, step.want) {
			t.Errorf("%s: stale flags = %v, want %v", step.what, got, step.want)
		}
		if cla, _ := m.ClusterLoadAssignments.Get(name); !cla.Equals(before) {
			t.Errorf("%s: the load assignment changed:\n got %v\nwant %v", step.what, cla.Message(), before.Message())
		}
	}
}
