package collections

import (
	"slices"
	"testing"

	tcpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	corev1 "k8s.io/api/core/v1"
)

func TestWildcardTCPPortsOf(t *testing.T) {
	tcp := func(port int32) ServicePort { return ServicePort{Name: "tcp", Port: port, Protocol: ProtocolTCP} }
	http := func(port int32) ServicePort { return ServicePort{Name: "http", Port: port, Protocol: ProtocolHTTP} }
	svc := func(name, ip string, ports ...ServicePort) ServiceInfo {
		return ServiceInfo{Name: name, Namespace: "ns", Hostname: name + ".ns.svc.cluster.local", ClusterIP: ip, Ports: ports}
	}
	headless := svc("db", "", tcp(5432))
	headless.Headless = true
	for _, tc := range []struct {
		name     string
		services []ServiceInfo
		want     []int32
	}{
		{"no cluster IP: a wildcard listener", []ServiceInfo{svc("redis", "", tcp(6379))}, []int32{6379}},
		{"a cluster IP has its own listener", []ServiceInfo{svc("redis", "10.96.0.1", tcp(6379))}, nil},
		{"headless: none", []ServiceInfo{headless}, nil},
		{"HTTP ports of the same service: none for them", []ServiceInfo{svc("web", "", http(80), tcp(81))}, []int32{81}},
		{"two services claim the port: none", []ServiceInfo{svc("a", "", tcp(7000)), svc("b", "", tcp(7000))}, nil},
		{"an HTTP service owns the port: none", []ServiceInfo{svc("a", "", tcp(80)), svc("web", "10.96.0.2", http(80))}, nil},
		{"a cluster IP on the same port does not conflict", []ServiceInfo{svc("a", "", tcp(7000)), svc("b", "10.96.0.2", tcp(7000))}, []int32{7000}},
		{"sorted by port", []ServiceInfo{svc("b", "", tcp(9000)), svc("a", "", tcp(7000))}, []int32{7000, 9000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int32
			for _, p := range wildcardTCPPortsOf(tc.services) {
				got = append(got, p.Port)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("ports %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSidecarListenersWithoutClusterIP builds the model from Services as
// a folder gives them, with no clusterIP: only "clusterIP: None" is
// headless, so Redis on a tcp- port still gets a TCP proxy listener.
func TestSidecarListenersWithoutClusterIP(t *testing.T) {
	_, in, m := newTestModel()
	noIP := func(s *corev1.Service) *corev1.Service { s.Spec.ClusterIP = ""; return s }
	redis := noIP(service("ns", "redis", map[string]string{"app": "redis"}, svcPort("tcp-redis", 6379, 6379)))
	redis.Annotations = map[string]string{AnnotationExportTo: "."}
	db := service("ns", "db", map[string]string{"app": "db"}, svcPort("tcp", 5432, 5432))
	db.Spec.ClusterIP = corev1.ClusterIPNone
	in.Set(redis, db,
		service("ns", "pg", map[string]string{"app": "pg"}, svcPort("tcp", 5433, 5433)),
		noIP(service("ns", "web", map[string]string{"app": "web"}, svcPort("http", 80, 8080))),
	)

	names := func() []string {
		var out []string
		for _, l := range m.SidecarListeners.List() {
			out = append(out, l.Name)
		}
		return out
	}
	if want := []string{"0.0.0.0_6379", "0.0.0.0_80", "10.96.0.1_5433"}; !slices.Equal(names(), want) {
		t.Fatalf("sidecar listeners %v, want %v", names(), want)
	}
	l, _ := m.SidecarListeners.Get("0.0.0.0_6379")
	if sa := l.Message().Address.GetSocketAddress(); sa.GetAddress() != "0.0.0.0" || sa.GetPortValue() != 6379 {
		t.Errorf("redis listener binds %v", sa)
	}
	tp := &tcpproxyv3.TcpProxy{}
	if err := l.Message().FilterChains[0].Filters[0].GetTypedConfig().UnmarshalTo(tp); err != nil || tp.GetCluster() != "outbound|6379||redis.ns.svc.cluster.local" {
		t.Errorf("redis listener: TCP proxy %v (%v)", tp, err)
	}
	if !slices.Equal(l.VisibleTo, []string{"ns"}) {
		t.Errorf("redis listener visible to %v, want its exportTo [ns]", l.VisibleTo)
	}

	// A second service on 6379 makes the wildcard ambiguous: neither
	// gets it, until the second one goes.
	in.Set(noIP(service("ns", "cache", nil, svcPort("tcp", 6379, 6379))))
	if want := []string{"0.0.0.0_80", "10.96.0.1_5433"}; !slices.Equal(names(), want) {
		t.Errorf("with two services on 6379: sidecar listeners %v, want %v", names(), want)
	}
	del[*corev1.Service](in, "ns/cache")
	if !slices.Contains(names(), "0.0.0.0_6379") {
		t.Errorf("cache deleted: sidecar listeners %v lack 0.0.0.0_6379", names())
	}
}
