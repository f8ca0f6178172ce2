package collections

import (
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"

	"github.com/meshd/meshd/internal/equalstest"
)

// TestEquals changes each field of each item type in turn and expects
// Equals to see it: a missed field would silently stop changes to it at
// krt's early cutoff.
func TestEquals(t *testing.T) {
	locality := Locality{Region: "r", Zone: "z", SubZone: "s", Cluster: "west"}
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
				Name: "web-0", Namespace: "ns", Cluster: "west", IP: "10.0.0.1", Labels: map[string]string{"app": "web"},
				ServiceAccount: "sa", Node: "node-1", Ready: true, Locality: locality,
				Services: []string{"ns/web"}, NamedPorts: map[string]int32{"web": 8080},
			})
		}},
		{"ServiceEndpoints", func(t *testing.T) {
			equalstest.Check(t, ServiceEndpoints{
				Cluster: ClusterName(80, "web.ns.svc.cluster.local"), Service: "ns/web",
				Hostname: "web.ns.svc.cluster.local", Port: 80, Protocol: ProtocolHTTP,
				Endpoints: []Endpoint{{IP: "10.0.0.1", Port: 8080, Healthy: true, Locality: locality, Workload: "ns/web-0", Stale: true}},
				ExportTo:  []string{"ns"},
			})
		}},
		{"Resource", func(t *testing.T) {
			equalstest.Check(t, Resource[*clusterv3.Cluster]{
				Name: "c", Packed: mustAny(&clusterv3.Cluster{Name: "c"}),
				VisibleTo: []string{"ns"}, HiddenFrom: []string{"other"}, NamedOnly: true,
			})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.check)
	}
}

// TestSecurityEquals does what TestEquals does for the security kinds.
func TestSecurityEquals(t *testing.T) {
	scope := PolicyScope{Namespace: "ns", Name: "p", Selector: map[string]string{"app": "web"}, MeshWide: true,
		Created: time.Unix(1700000000, 0), Generation: 2}
	rule := AuthzRule{Name: "ns/p/rules[0]", Policy: &rbacv3.Policy{Permissions: []*rbacv3.Permission{
		{Rule: &rbacv3.Permission_Any{Any: true}}}}}
	tests := []struct {
		name  string
		check func(*testing.T)
	}{
		{"ClusterSecurity", func(t *testing.T) {
			equalstest.Check(t, ClusterSecurity{Cluster: "c", MTLS: true, SANs: []string{"spiffe://cluster.local/ns/ns/sa/web"}})
		}},
		{"PeerAuthn", func(t *testing.T) {
			equalstest.Check(t, PeerAuthn{PolicyScope: scope, Mode: MTLSStrict,
				Ports: map[uint32]MTLSMode{8080: MTLSPermissive}, Problems: []string{"x"}})
		}},
		{"WorkloadMTLS", func(t *testing.T) {
			equalstest.Check(t, WorkloadMTLS{Mode: MTLSStrict, Ports: map[uint32]MTLSMode{8080: MTLSPermissive}, Policies: []string{"ns/p"}})
		}},
		{"AuthzPolicy", func(t *testing.T) {
			equalstest.Check(t, AuthzPolicy{PolicyScope: scope, Action: AuthzDeny, Rules: []AuthzRule{rule}, Problems: []string{"x"}})
		}},
		{"WorkloadRBAC", func(t *testing.T) {
			equalstest.Check(t, WorkloadRBAC{Deny: []AuthzRule{rule}, Allow: []AuthzRule{rule}, HasAllow: true, Policies: []string{"ns/p"}})
		}},
		{"WorkloadSecurity", func(t *testing.T) {
			equalstest.Check(t, WorkloadSecurity{Name: "web-0", Namespace: "ns", Cluster: "west", ServiceAccount: "web",
				SPIFFEID: "spiffe://cluster.local/ns/ns/sa/web",
				MTLS:     WorkloadMTLS{Mode: MTLSStrict, Ports: map[uint32]MTLSMode{8080: MTLSPermissive}, Policies: []string{"ns/p"}},
				RBAC:     WorkloadRBAC{Deny: []AuthzRule{rule}, Allow: []AuthzRule{rule}, HasAllow: true, Policies: []string{"ns/p"}}})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.check)
	}
}
