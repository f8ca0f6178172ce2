package collections

import (
	"slices"
	"strings"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
)

// TestValidateDeepCatchesErrors keeps the validation helper honest: it
// must reject invalid messages, including ones packed in an Any.
func TestValidateDeepCatchesErrors(t *testing.T) {
	badHCM := httpConnectionManager("x", "x")
	badHCM.HttpFilters[0].Name = ""
	for _, tc := range []struct {
		name string
		msg  proto.Message
	}{
		{"cluster without name", &clusterv3.Cluster{ConnectTimeout: durationpb.New(time.Second)}},
		{"negative connect timeout", &clusterv3.Cluster{Name: "c", ConnectTimeout: durationpb.New(-time.Second)}},
		{"invalid HCM packed in a listener", &listenerv3.Listener{Name: "x", ApiListener: &listenerv3.ApiListener{ApiListener: mustAny(badHCM)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := validateMsg(tc.msg.ProtoReflect()); err == nil {
				t.Errorf("no error for %v", tc.msg)
			}
		})
	}
}

func unpackHCM(t *testing.T, a *anypb.Any) *hcmv3.HttpConnectionManager {
	t.Helper()
	hcm := &hcmv3.HttpConnectionManager{}
	if err := a.UnmarshalTo(hcm); err != nil {
		t.Fatalf("unpack HCM: %v", err)
	}
	return hcm
}

// checkHCM checks what gRPC clients require of an HCM: RDS over ADS, and
// the router filter last.
func checkHCM(t *testing.T, hcm *hcmv3.HttpConnectionManager, route string) {
	t.Helper()
	rds := hcm.GetRds()
	if rds == nil || rds.RouteConfigName != route || rds.GetConfigSource().GetAds() == nil {
		t.Errorf("RDS %v, want route %q over ADS", rds, route)
	}
	last := hcm.HttpFilters[len(hcm.HttpFilters)-1]
	if !last.GetTypedConfig().MessageIs(&routerv3.Router{}) {
		t.Errorf("last filter %v is not the router", last)
	}
}

func TestListenersAndClusters(t *testing.T) {
	_, in, m := newTestModel()
	web := service("ns", "web", map[string]string{"app": "web"}, svcPort("http", 80, 8080), svcPort("grpc", 9090, 9090))
	web.Spec.ClusterIP = "10.96.0.10"
	in.Set(
		web,
		service("ns", "api", map[string]string{"app": "api"}, svcPort("http-api", 80, 8080)),
		service("ns", "db", map[string]string{"app": "db"}, svcPort("tcp", 5432, 5432)),
	)

	checkGRPCListeners(t, m)
	checkSidecarListeners(t, m)
	checkClusters(t, m)
	if m.Clusters.Len() != 4 {
		t.Errorf("%d clusters, want 4", m.Clusters.Len())
	}
	if m.Listeners.Len() != 7 || m.RouteConfigurations.Len() != 6 {
		t.Errorf("%d listeners and %d route configurations, want 7 and 6", m.Listeners.Len(), m.RouteConfigurations.Len())
	}
	validateModel(t, m)

	// Without sidecar resources only the gRPC ones remain.
	_, in2, m2 := newTestModel(WithSidecarResources(false))
	in2.Set(service("ns", "web", map[string]string{"app": "web"}, svcPort("http", 80, 8080)))
	if m2.Listeners.Len() != 1 || m2.RouteConfigurations.Len() != 1 || m2.SidecarListeners != nil {
		t.Errorf("without sidecar: %d listeners, %d route configurations", m2.Listeners.Len(), m2.RouteConfigurations.Len())
	}
}

// checkGRPCListeners: a gRPC listener per service port, naming its route
// configuration.
func checkGRPCListeners(t *testing.T, m *Model) {
	t.Helper()
	var grpcNames []string
	for _, l := range m.GRPCListeners.List() {
		grpcNames = append(grpcNames, l.Name)
		if l.Message().Name != l.Name {
			t.Errorf("listener %s carries name %s", l.Name, l.Message().Name)
		}
		checkHCM(t, unpackHCM(t, l.Message().ApiListener.ApiListener), l.Name)
		rc, ok := m.RouteConfigurations.Get(l.Name)
		if !ok {
			t.Errorf("route configuration %s missing", l.Name)
			continue
		}
		if vh := rc.Message().VirtualHosts; len(vh) != 1 || !slices.Contains(vh[0].Domains, l.Name) {
			t.Errorf("route configuration %s: virtual hosts %v", l.Name, vh)
		}
	}
	wantGRPC := []string{"api.ns.svc.cluster.local:80", "db.ns.svc.cluster.local:5432", "web.ns.svc.cluster.local:80", "web.ns.svc.cluster.local:9090"}
	if !slices.Equal(grpcNames, wantGRPC) {
		t.Errorf("gRPC listeners %v, want %v", grpcNames, wantGRPC)
	}
}

// checkSidecarListeners: a sidecar listener per HTTP port number, and a
// TCP proxy per non-HTTP service port.
func checkSidecarListeners(t *testing.T, m *Model) {
	t.Helper()
	var sideNames []string
	for _, l := range m.SidecarListeners.List() {
		sideNames = append(sideNames, l.Name)
		sa := l.Message().Address.GetSocketAddress()
		f := l.Message().FilterChains[0].Filters[0]
		if ip, port, _ := strings.Cut(l.Name, "_"); ip != sa.Address || itoa(int32(sa.GetPortValue())) != port {
			t.Errorf("listener %s binds %v", l.Name, sa)
		} else if ip == "0.0.0.0" {
			checkHCM(t, unpackHCM(t, f.GetTypedConfig()), port)
		} else {
			tp := &tcpproxyv3.TcpProxy{}
			if err := f.GetTypedConfig().UnmarshalTo(tp); err != nil || tp.GetCluster() != "outbound|5432||db.ns.svc.cluster.local" {
				t.Errorf("listener %s: TCP proxy %v (%v)", l.Name, tp, err)
			}
		}
	}
	if want := []string{"0.0.0.0_80", "0.0.0.0_9090", "10.96.0.1_5432"}; !slices.Equal(sideNames, want) {
		t.Errorf("sidecar listeners %v, want %v", sideNames, want)
	}
	rc, _ := m.SidecarRouteConfigurations.Get("80")
	var hosts []string
	for _, vh := range rc.Message().VirtualHosts {
		hosts = append(hosts, vh.Name)
	}
	if want := []string{"api.ns.svc.cluster.local:80", "web.ns.svc.cluster.local:80"}; !slices.Equal(hosts, want) {
		t.Errorf("sidecar virtual hosts of 80: %v, want %v", hosts, want)
	}
	wantDomains := []string{"web.ns.svc.cluster.local", "web.ns.svc.cluster.local:80", "web.ns", "web.ns:80", "web.ns.svc", "web.ns.svc:80", "10.96.0.10", "10.96.0.10:80"}
	if got := rc.Message().VirtualHosts[1].Domains; !slices.Equal(got, wantDomains) {
		t.Errorf("domains %v, want %v", got, wantDomains)
	}
	if got := rc.Message().VirtualHosts[0].Domains; !slices.Contains(got, "10.96.0.1:80") {
		t.Errorf("api domains %v lack its cluster IP", got)
	}
}

// checkClusters: EDS over ADS; HTTP/2 upstream for gRPC ports only.
func checkClusters(t *testing.T, m *Model) {
	t.Helper()
	for _, c := range m.Clusters.List() {
		msg := c.Message()
		if msg.GetType() != clusterv3.Cluster_EDS || msg.GetEdsClusterConfig().GetEdsConfig().GetAds() == nil {
			t.Errorf("cluster %s is not EDS over ADS", c.Name)
		}
		if msg.LbPolicy != clusterv3.Cluster_ROUND_ROBIN {
			t.Errorf("cluster %s lb policy %s", c.Name, msg.LbPolicy)
		}
		opts, h2 := msg.TypedExtensionProtocolOptions[httpProtocolOptionsKey]
		if want := strings.HasPrefix(c.Name, "outbound|9090|"); h2 != want {
			t.Errorf("cluster %s: HTTP/2 options %v, want %v", c.Name, h2, want)
		} else if h2 {
			po := &httpv3.HttpProtocolOptions{}
			if err := opts.UnmarshalTo(po); err != nil || po.GetExplicitHttpConfig().GetHttp2ProtocolOptions() == nil {
				t.Errorf("cluster %s: protocol options %v (%v)", c.Name, po, err)
			}
		}
	}
}

func TestResourceEquals(t *testing.T) {
	a := newResource("c", buildCluster("c", ProtocolGRPC, time.Second))
	b := newResource("c", buildCluster("c", ProtocolGRPC, time.Second))
	if !a.Equals(b) {
		t.Error("equal resources differ")
	}
	if c := newResource("c", buildCluster("c", ProtocolGRPC, 2*time.Second)); a.Equals(c) {
		t.Error("different messages compare equal")
	}
	if c := newResource("d", buildCluster("c", ProtocolGRPC, time.Second)); a.Equals(c) {
		t.Error("different names compare equal")
	}
	name, packed := a.Serialized()
	if name != "c" || packed != a.Packed || !proto.Equal(a.Message(), buildCluster("c", ProtocolGRPC, time.Second)) {
		t.Errorf("Serialized() = %s, %v", name, packed)
	}
}

func TestSidecarRouteConfigDropsRepeatedDomains(t *testing.T) {
	a := PortRoutes{Cluster: ClusterName(80, "a.ns.svc.cluster.local"), Name: "a", Namespace: "ns",
		Hostname: "a.ns.svc.cluster.local", ClusterIP: "10.0.0.1", Port: 80, Protocol: ProtocolHTTP}
	b := a
	b.Cluster, b.Name, b.Hostname = ClusterName(80, "b.ns.svc.cluster.local"), "b", "b.ns.svc.cluster.local"
	rc := buildSidecarRouteConfig("80", []PortRoutes{a, b})
	validateDeep(t, rc)
	if got := rc.VirtualHosts[0].Domains; !slices.Contains(got, "10.0.0.1:80") {
		t.Errorf("first service lost the shared IP: %v", got)
	}
	if got := rc.VirtualHosts[1].Domains; slices.Contains(got, "10.0.0.1:80") || !slices.Contains(got, "b.ns:80") {
		t.Errorf("second service domains %v", got)
	}
}
