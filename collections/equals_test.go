package collections

import (
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"

	"github.com/meshd/meshd/internal/equalstest"
)

// TestEquals changes each field of each item type in turn and expects
// Equals to see it: a missed field would silently stop changes to it at
// krt's early cutoff.
func TestEquals(t *testing.T) {
	locality := Locality{Region: "r", Zone: "z", SubZone: "s"}
	port := ServicePort{Name: "http", Port: 80, TargetPort: 8080, TargetPortName: "web", Protocol: ProtocolHTTP}
	tests := []struct {
		name  string
		check func(*testing.T)
	}{
		{"ServiceInfo", func(t *testing.T) {
			equalstest.Check(t, ServiceInfo{
				Name: "web", Namespace: "ns", Hostname: "web.ns.svc.cluster.local", ClusterIP: "10.96.0.1", Headless: true,
				Selector: map[string]string{"app": "web"}, PublishNotReady: true,
				Ports: []ServicePort{port}, ExportTo: []string{"ns"},
			})
		}},
		{"Workload", func(t *testing.T) {
			equalstest.Check(t, Workload{
				Name: "web-0", Namespace: "ns", IP: "10.0.0.1", Labels: map[string]string{"app": "web"},
				ServiceAccount: "sa", Node: "node-1", Ready: true, Locality: locality,
				Services: []string{"ns/web"}, NamedPorts: map[string]int32{"web": 8080},
			})
		}},
		{"ServiceEndpoints", func(t *testing.T) {
			equalstest.Check(t, ServiceEndpoints{
				Cluster: ClusterName(80, "web.ns.svc.cluster.local"), Service: "ns/web",
				Hostname: "web.ns.svc.cluster.local", Port: 80, Protocol: ProtocolHTTP,
				Endpoints: []Endpoint{{IP: "10.0.0.1", Port: 8080, Healthy: true, Locality: locality, Workload: "ns/web-0"}},
				ExportTo:  []string{"ns"},
			})
		}},
		{"Resource", func(t *testing.T) {
			equalstest.Check(t, Resource[*clusterv3.Cluster]{
				Name: "c", Message: &clusterv3.Cluster{Name: "c"},
				VisibleTo: []string{"ns"}, HiddenFrom: []string{"other"},
			})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.check)
	}
}
