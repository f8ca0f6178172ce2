package collections

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources/meshconfig"
)

func TestPortProtocol(t *testing.T) {
	for _, tc := range []struct {
		name string
		app  *string
		want Protocol
	}{
		{"grpc", nil, ProtocolGRPC},
		{"grpc-api", nil, ProtocolGRPC},
		{"GRPC-Api", nil, ProtocolGRPC},
		{"grpc-web", nil, ProtocolGRPCWeb},
		{"grpc-web-ui", nil, ProtocolGRPCWeb},
		{"http", nil, ProtocolHTTP},
		{"http-metrics", nil, ProtocolHTTP},
		{"http2", nil, ProtocolHTTP2},
		{"https-admin", nil, ProtocolHTTPS},
		{"tcp-db", nil, ProtocolTCP},
		{"redis", nil, ProtocolTCP},
		{"web", nil, ProtocolTCP},
		{"", nil, ProtocolTCP},
		{"httpx", nil, ProtocolTCP},
		{"web", ptr("grpc"), ProtocolGRPC},
		{"http", ptr("kubernetes.io/h2c"), ProtocolHTTP2},
		{"grpc", ptr("tcp"), ProtocolTCP},
		{"grpc", ptr("example.com/custom"), ProtocolGRPC},
	} {
		t.Run(fmt.Sprintf("%s/%v", tc.name, derefOr(tc.app, "-")), func(t *testing.T) {
			if got := PortProtocol(tc.name, tc.app); got != tc.want {
				t.Errorf("PortProtocol(%q, %v) = %s, want %s", tc.name, derefOr(tc.app, "nil"), got, tc.want)
			}
		})
	}
}

// serviceInfoCase is a service, the mesh's domain suffix, and the
// ServiceInfo TestServiceInfo wants of it (nil: none).
type serviceInfoCase struct {
	name   string
	svc    *corev1.Service
	domain string
	want   *ServiceInfo
}

func TestServiceInfo(t *testing.T) {
	for _, tc := range serviceInfoCases() {
		t.Run(tc.name, func(t *testing.T) {
			_, in, m := newTestModel()
			if tc.domain != "" {
				mc := meshconfig.Default()
				mc.DomainSuffix = tc.domain
				in.Set(mc)
			}
			in.Set(tc.svc)
			got, ok := m.Services.Get(tc.svc.Namespace + "/" + tc.svc.Name)
			wantItem(t, got, ok, tc.want)
			validateModel(t, m)
		})
	}
}

func serviceInfoCases() []serviceInfoCase {
	udp := svcPort("dns", 53, 53)
	udp.Protocol = corev1.ProtocolUDP
	unset := corev1.ServicePort{Name: "http-alt", Port: 81}
	dup := svcPort("dup", 80, 1234)
	return []serviceInfoCase{
		{
			name: "ports by number, by name and defaulted; a repeated port number is dropped",
			svc: service("ns", "web", map[string]string{"app": "web"},
				svcPort("http", 80, 8080), svcPort("grpc-api", 9090, "grpc"), unset, dup),
			want: &ServiceInfo{
				Name: "web", Namespace: "ns", Hostname: "web.ns.svc.cluster.local", ClusterIP: "10.96.0.1",
				Selector: map[string]string{"app": "web"},
				Ports: []ServicePort{
					{Name: "http", Port: 80, TargetPort: 8080, Protocol: ProtocolHTTP},
					{Name: "grpc-api", Port: 9090, TargetPortName: "grpc", Protocol: ProtocolGRPC},
					{Name: "http-alt", Port: 81, TargetPort: 81, Protocol: ProtocolHTTP},
				},
			},
		},
		{
			name:   "domain suffix from mesh config, UDP left out",
			svc:    service("other", "dns", nil, udp, svcPort("tcp", 5353, 5353)),
			domain: "mesh.example",
			want: &ServiceInfo{
				Name: "dns", Namespace: "other", Hostname: "dns.other.svc.mesh.example", ClusterIP: "10.96.0.1",
				Ports: []ServicePort{{Name: "tcp", Port: 5353, TargetPort: 5353, Protocol: ProtocolTCP}},
			},
		},
		{
			name: "headless",
			svc:  with(service("ns", "db", map[string]string{"app": "db"}, svcPort("", 5432, 5432)), func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone }),
			want: &ServiceInfo{
				Name: "db", Namespace: "ns", Hostname: "db.ns.svc.cluster.local", Headless: true, Selector: map[string]string{"app": "db"},
				Ports: []ServicePort{{Port: 5432, TargetPort: 5432, Protocol: ProtocolTCP}},
			},
		},
		{
			name: "no cluster IP, as in a folder manifest, is not headless",
			svc:  with(service("ns", "redis", map[string]string{"app": "redis"}, svcPort("tcp-redis", 6379, 6379)), func(s *corev1.Service) { s.Spec.ClusterIP = "" }),
			want: &ServiceInfo{
				Name: "redis", Namespace: "ns", Hostname: "redis.ns.svc.cluster.local", Selector: map[string]string{"app": "redis"},
				Ports: []ServicePort{{Name: "tcp-redis", Port: 6379, TargetPort: 6379, Protocol: ProtocolTCP}},
			},
		},
		{
			name: "external name is left out",
			svc:  with(service("ns", "ext", nil, svcPort("http", 80, 80)), func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeExternalName }),
		},
	}
}

func TestMeshConfigChangeRenamesResources(t *testing.T) {
	_, in, m := newTestModel()
	in.Set(service("ns", "web", map[string]string{"app": "web"}, svcPort("http", 80, 8080)))
	in.Set(pod("ns", "web-0", "10.0.0.1", map[string]string{"app": "web"}, true))
	if _, ok := m.Clusters.Get("outbound|80||web.ns.svc.cluster.local"); !ok {
		t.Fatal("default domain cluster missing")
	}
	mc := meshconfig.Default()
	mc.DomainSuffix = "corp.internal"
	mc.ConnectTimeout = meshconfig.Duration(3 * time.Second)
	in.Set(mc)
	c, ok := m.Clusters.Get("outbound|80||web.ns.svc.corp.internal")
	if !ok {
		t.Fatalf("renamed cluster missing; clusters: %v", m.Clusters.List())
	}
	if got := c.Message().ConnectTimeout.AsDuration(); got != 3*time.Second {
		t.Errorf("connect timeout %s, want 3s", got)
	}
	if m.Clusters.Len() != 1 || m.ClusterLoadAssignments.Len() != 1 {
		t.Errorf("stale resources kept: %d clusters, %d CLAs", m.Clusters.Len(), m.ClusterLoadAssignments.Len())
	}
	if _, ok := m.Listeners.Get("web.ns.svc.corp.internal:80"); !ok {
		t.Error("renamed listener missing")
	}
	del[meshconfig.MeshConfig](in, krt.SingletonKey)
	if _, ok := m.Clusters.Get("outbound|80||web.ns.svc.cluster.local"); !ok {
		t.Error("clearing the mesh config does not fall back to the defaults")
	}
}
