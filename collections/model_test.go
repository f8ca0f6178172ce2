package collections

import (
	"testing"
)

func TestBuildSmoke(t *testing.T) {
	_, in, m := newTestModel()
	in.Set(service("ns", "echo", map[string]string{"app": "echo"}, svcPort("grpc", 8080, 9090)))
	in.Set(
		pod("ns", "echo-1", "127.0.0.11", map[string]string{"app": "echo"}, true),
		pod("ns", "echo-2", "127.0.0.12", map[string]string{"app": "echo"}, false),
	)
	const cluster = "outbound|8080||echo.ns.svc.cluster.local"
	for name, c := range map[string]interface{ Len() int }{
		"Clusters": m.Clusters, "CLAs": m.ClusterLoadAssignments, "Listeners": m.Listeners, "RouteConfigurations": m.RouteConfigurations,
	} {
		if c.Len() == 0 {
			t.Errorf("%s is empty", name)
		}
	}
	if _, ok := m.Clusters.Get(cluster); !ok {
		t.Errorf("cluster %s missing", cluster)
	}
	cla, ok := m.ClusterLoadAssignments.Get(cluster)
	if !ok {
		t.Fatalf("CLA %s missing", cluster)
	}
	if n := len(cla.Message().Endpoints[0].LbEndpoints); n != 2 {
		t.Errorf("CLA has %d endpoints, want 2", n)
	}
	if _, ok := m.Listeners.Get("echo.ns.svc.cluster.local:8080"); !ok {
		t.Errorf("gRPC listener missing")
	}
	if _, ok := m.Listeners.Get("0.0.0.0_8080"); !ok {
		t.Errorf("sidecar listener missing")
	}
	validateModel(t, m)
}
