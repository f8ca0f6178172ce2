package collections

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func slice(ns, name, svc string, typ discoveryv1.AddressType, ports []discoveryv1.EndpointPort, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{LabelServiceName: svc}},
		AddressType: typ, Ports: ports, Endpoints: eps,
	}
}

func sliceEP(ready *bool, zone string, ips ...string) discoveryv1.Endpoint {
	e := discoveryv1.Endpoint{Addresses: ips, Conditions: discoveryv1.EndpointConditions{Ready: ready}}
	if zone != "" {
		e.Zone = ptr(zone)
	}
	return e
}

// endpointsString renders the endpoints of a cluster compactly:
// "ip:port[!] @locality", "!" marking unhealthy.
func endpointsString(e ServiceEndpoints) string {
	var parts []string
	for _, ep := range e.Endpoints {
		s := ep.Address()
		if !ep.Healthy {
			s += "!"
		}
		if l := ep.Locality.String(); l != "" {
			s += "@" + l
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// endpointsCase is a service with its pods or slices, and the endpoints
// TestEndpoints wants of it, cluster by cluster (see endpointsString).
type endpointsCase struct {
	name   string
	svc    *corev1.Service
	pods   []*corev1.Pod
	slices []*discoveryv1.EndpointSlice
	want   map[string]string // cluster -> endpointsString
}

func TestEndpoints(t *testing.T) {
	for _, tc := range append(podEndpointsCases(), sliceEndpointsCases()...) {
		t.Run(tc.name, func(t *testing.T) {
			_, in, m := newTestModel()
			in.Set(tc.svc)
			set(in, tc.pods...)
			set(in, tc.slices...)
			got := map[string]string{}
			for _, e := range m.Endpoints.List() {
				got[e.Cluster] = endpointsString(e)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("endpoints:\n got %v\nwant %v", got, tc.want)
			}
			validateModel(t, m)
		})
	}
}

// podEndpointsCases are services with selectors: endpoints from pods.
func podEndpointsCases() []endpointsCase {
	app := map[string]string{"app": "a"}
	withPort := func(p *corev1.Pod, name string, port int32) *corev1.Pod {
		p.Spec.Containers = []corev1.Container{{Ports: []corev1.ContainerPort{{Name: name, ContainerPort: port}}}}
		return p
	}
	return []endpointsCase{
		{
			name: "selected pods, not-ready published unhealthy",
			svc:  service("ns", "a", app, svcPort("http", 80, 8080)),
			pods: []*corev1.Pod{
				pod("ns", "a-0", "10.0.0.2", app, true),
				pod("ns", "a-1", "10.0.0.1", app, false),
				pod("ns", "a-2", "", app, false),                                  // no IP yet
				pod("other", "a-0", "10.1.0.1", app, true),                        // other namespace
				pod("ns", "b-0", "10.0.0.9", map[string]string{"app": "b"}, true), // not selected
			},
			want: map[string]string{"outbound|80||a.ns.svc.cluster.local": "10.0.0.1:8080! 10.0.0.2:8080"},
		},
		{
			name: "publishNotReadyAddresses publishes not-ready pods healthy",
			svc:  with(service("ns", "a", app, svcPort("http", 80, 8080)), func(s *corev1.Service) { s.Spec.PublishNotReadyAddresses = true }),
			pods: []*corev1.Pod{pod("ns", "a-0", "10.0.0.2", app, true), pod("ns", "a-1", "10.0.0.1", app, false)},
			want: map[string]string{"outbound|80||a.ns.svc.cluster.local": "10.0.0.1:8080 10.0.0.2:8080"},
		},
		{
			name: "named target port resolved per pod",
			svc:  service("ns", "a", app, svcPort("grpc", 9090, "api"), svcPort("http", 80, 8080)),
			pods: []*corev1.Pod{
				withPort(pod("ns", "a-0", "10.0.0.1", app, true), "api", 7000),
				withPort(pod("ns", "a-1", "10.0.0.2", app, true), "api", 7001),
				pod("ns", "a-2", "10.0.0.3", app, true), // lacks the named port
			},
			want: map[string]string{
				"outbound|9090||a.ns.svc.cluster.local": "10.0.0.1:7000 10.0.0.2:7001",
				"outbound|80||a.ns.svc.cluster.local":   "10.0.0.1:8080 10.0.0.2:8080 10.0.0.3:8080",
			},
		},
	}
}

// sliceEndpointsCases are services and EndpointSlices: endpoints from the
// slices of services without a selector alone.
func sliceEndpointsCases() []endpointsCase {
	app := map[string]string{"app": "a"}
	tcp := ptr(corev1.ProtocolTCP)
	return []endpointsCase{
		{
			name: "selector-less service from slices, de-duplicated, ports by name",
			svc:  service("ns", "ext", nil, svcPort("http", 80, 8080), svcPort("grpc", 90, 9090)),
			slices: []*discoveryv1.EndpointSlice{
				slice("ns", "ext-1", "ext", discoveryv1.AddressTypeIPv4,
					[]discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(8081)), Protocol: tcp}, {Name: ptr("grpc"), Port: ptr(int32(9091))}},
					sliceEP(nil, "z1", "192.168.0.1"), sliceEP(ptr(false), "z1", "192.168.0.2"), sliceEP(ptr(false), "", "192.168.0.3")),
				slice("ns", "ext-2", "ext", discoveryv1.AddressTypeIPv4,
					[]discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(8081))}},
					sliceEP(ptr(true), "z1", "192.168.0.2"), sliceEP(ptr(true), "z1", "192.168.0.1")),
				slice("ns", "ext-3", "ext", discoveryv1.AddressTypeFQDN,
					[]discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(80))}}, sliceEP(nil, "", "example.com")),
				slice("ns", "other", "not-ext", discoveryv1.AddressTypeIPv4,
					[]discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(80))}}, sliceEP(nil, "", "192.168.9.9")),
			},
			want: map[string]string{
				// 192.168.0.2 is unready in one slice and ready in the
				// other: the ready listing wins.
				"outbound|80||ext.ns.svc.cluster.local": "192.168.0.3:8081! 192.168.0.1:8081@/z1/ 192.168.0.2:8081@/z1/",
				"outbound|90||ext.ns.svc.cluster.local": "192.168.0.3:9091! 192.168.0.1:9091@/z1/ 192.168.0.2:9091!@/z1/",
			},
		},
		{
			name: "selector ignores slices",
			svc:  service("ns", "a", app, svcPort("http", 80, 8080)),
			slices: []*discoveryv1.EndpointSlice{slice("ns", "a-1", "a", discoveryv1.AddressTypeIPv4,
				[]discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(80))}}, sliceEP(nil, "", "192.168.1.1"))},
			want: map[string]string{"outbound|80||a.ns.svc.cluster.local": ""},
		},
	}
}

func TestBuildCLA(t *testing.T) {
	e := ServiceEndpoints{Cluster: "outbound|80||a.ns.svc.cluster.local", Endpoints: dedupEndpoints([]Endpoint{
		{IP: "10.0.0.3", Port: 80, Healthy: true, Locality: Locality{Region: "r", Zone: "z2", SubZone: ""}},
		{IP: "10.0.0.1", Port: 80, Healthy: true, Locality: Locality{Region: "r", Zone: "z1", SubZone: ""}},
		{IP: "10.0.0.2", Port: 80, Healthy: false, Locality: Locality{Region: "r", Zone: "z1", SubZone: ""}},
		{IP: "10.0.0.4", Port: 80, Healthy: true},
	})}
	cla := packedCLA(t, e, clusterTraffic{})
	validateDeep(t, cla)
	var got []string
	for _, l := range cla.Endpoints {
		s := fmt.Sprintf("%s/%s w=%d:", l.Locality.Region, l.Locality.Zone, l.LoadBalancingWeight.GetValue())
		for _, ep := range l.LbEndpoints {
			sa := ep.GetEndpoint().GetAddress().GetSocketAddress()
			s += fmt.Sprintf(" %s:%d", sa.Address, sa.GetPortValue())
			if ep.HealthStatus != corev3.HealthStatus_HEALTHY {
				s += "(" + ep.HealthStatus.String() + ")"
			}
			if ep.LoadBalancingWeight != nil {
				t.Errorf("endpoint weight %d written, want it unset (every client reads 1)", ep.LoadBalancingWeight.GetValue())
			}
		}
		got = append(got, s)
	}
	want := []string{"/ w=1: 10.0.0.4:80", "r/z1 w=2: 10.0.0.1:80 10.0.0.2:80(UNHEALTHY)", "r/z2 w=1: 10.0.0.3:80"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("CLA:\n got %q\nwant %q", got, want)
	}
	if cla.ClusterName != e.Cluster {
		t.Errorf("cluster name %q", cla.ClusterName)
	}
}

// TestBuildCLAClusters checks the localities and priorities of endpoints
// in several clusters: one locality per cluster and zone, and priorities
// only when the local cluster is preferred and has endpoints.
func TestBuildCLAClusters(t *testing.T) {
	local := Endpoint{IP: "10.0.0.1", Port: 80, Healthy: true, Locality: Locality{Region: "r", Zone: "z"}}
	west := Endpoint{IP: "10.1.0.1", Port: 80, Healthy: true, Locality: Locality{Region: "r", Zone: "z", Cluster: "west"}}
	east := Endpoint{IP: "10.2.0.1", Port: 80, Healthy: true, Locality: Locality{Cluster: "east"}}
	named := Endpoint{IP: "10.3.0.1", Port: 80, Healthy: true, Locality: Locality{Region: "r", Zone: "z", Cluster: "home"}}
	for _, tc := range []struct {
		name        string
		eps         []Endpoint
		preferLocal bool
		local       string   // WithClusterName
		want        []string // "region/zone/subzone p=priority: addresses"
	}{
		{"spread", []Endpoint{local, west, east}, false, "",
			[]string{"r/z/ p=0: 10.0.0.1", "//@east p=0: 10.2.0.1", "r/z/@west p=0: 10.1.0.1"}},
		{"prefer local", []Endpoint{local, west, east}, true, "",
			[]string{"r/z/ p=0: 10.0.0.1", "//@east p=1: 10.2.0.1", "r/z/@west p=1: 10.1.0.1"}},
		{"prefer local without local endpoints", []Endpoint{west, east}, true, "",
			[]string{"//@east p=0: 10.2.0.1", "r/z/@west p=0: 10.1.0.1"}},
		{"prefer a named local cluster", []Endpoint{named, west, east}, true, "home",
			[]string{"r/z/@home p=0: 10.3.0.1", "//@east p=1: 10.2.0.1", "r/z/@west p=1: 10.1.0.1"}},
		{"prefer a named local cluster without its endpoints", []Endpoint{west, east}, true, "home",
			[]string{"//@east p=0: 10.2.0.1", "r/z/@west p=0: 10.1.0.1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			traffic := clusterTraffic{preferLocal: tc.preferLocal, local: tc.local}
			cla := packedCLA(t, ServiceEndpoints{Cluster: "outbound|80||a.ns.svc.cluster.local", Endpoints: dedupEndpoints(tc.eps)}, traffic)
			validateDeep(t, cla)
			var got []string
			for _, l := range cla.Endpoints {
				s := fmt.Sprintf("%s/%s/%s p=%d:", l.Locality.Region, l.Locality.Zone, l.Locality.SubZone, l.Priority)
				for _, ep := range l.LbEndpoints {
					s += " " + ep.GetEndpoint().GetAddress().GetSocketAddress().Address
				}
				got = append(got, s)
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Errorf("localities:\n got %q\nwant %q", got, want)
			}
		})
	}
}
