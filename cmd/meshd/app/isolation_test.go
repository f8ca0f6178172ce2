package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest"
)

// scopedServices are two services of namespace a, one exported only to
// its own namespace.
const scopedServices = `apiVersion: v1
kind: Service
metadata:
  name: priv
  namespace: a
  annotations:
    networking.istio.io/exportTo: "."
spec:
  selector:
    app: priv
  ports:
  - name: grpc
    port: 9080
---
apiVersion: v1
kind: Service
metadata:
  name: pub
  namespace: a
spec:
  selector:
    app: pub
  ports:
  - name: grpc
    port: 9080
`

const (
	privCluster = "outbound|9080||priv.a.svc.cluster.local"
	pubCluster  = "outbound|9080||pub.a.svc.cluster.local"
)

// proxyIn opens a SotW stream (dialADS, which asks for every cluster first)
// as a proxy of namespace ns.
func proxyIn(t *testing.T, addr, ns string) *xdstest.SotW {
	t.Helper()
	md, err := structpb.NewStruct(map[string]any{"NAMESPACE": ns})
	if err != nil {
		t.Fatal(err)
	}
	return dialADS(t, addr, nil, &corev3.Node{Id: "proxy-" + ns, Metadata: md}, true)
}

// clustersFor returns the clusters a proxy of namespace ns receives.
func clustersFor(t *testing.T, addr, ns string) []string {
	t.Helper()
	return clusterNames(t, proxyIn(t, addr, ns).Recv())
}

// TestNamespaceIsolationFlag runs meshd with and without
// --namespace-isolation and checks which clusters proxies of two
// namespaces receive.
func TestNamespaceIsolationFlag(t *testing.T) {
	tests := []struct {
		name  string
		flag  bool
		wantA []string
		wantB []string
	}{
		{"off", false, []string{privCluster, pubCluster}, []string{privCluster, pubCluster}},
		{"on", true, []string{privCluster, pubCluster}, []string{pubCluster}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "services.yaml"), []byte(scopedServices), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"--config-dir", dir, "--xds-addr", "127.0.0.1:0", "--debug-addr", "127.0.0.1:0", "--push-debounce", "10ms"}
			if tt.flag {
				args = append(args, "--namespace-isolation")
			}
			cfg, err := ParseFlags(args, nil)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.NamespaceIsolation != tt.flag {
				t.Fatalf("NamespaceIsolation = %v, want %v", cfg.NamespaceIsolation, tt.flag)
			}
			r := start(t, cfg)
			r.waitReady(t)
			if got := clustersFor(t, r.app.XDSAddr(), "a"); !slices.Equal(got, tt.wantA) {
				t.Errorf("proxy of a: clusters %v, want %v", got, tt.wantA)
			}
			if got := clustersFor(t, r.app.XDSAddr(), "b"); !slices.Equal(got, tt.wantB) {
				t.Errorf("proxy of b: clusters %v, want %v", got, tt.wantB)
			}
			// A sidecar's port-wide listener and routes hold only the
			// services its namespace may see.
			for ns, want := range map[string][]string{"a": tt.wantA, "b": tt.wantB} {
				var hosts []string
				for _, c := range want {
					hosts = append(hosts, strings.TrimPrefix(c, "outbound|9080||")+":9080")
				}
				if got := sidecarHostsFor(t, r.app.XDSAddr(), ns); !slices.Equal(got, hosts) {
					t.Errorf("sidecar of %s: virtual hosts on port 9080 %v, want %v", ns, got, hosts)
				}
			}
		})
	}
}

// sidecarHostsFor opens a SotW stream as a proxy of namespace ns, asks for
// every listener, follows the one on port 9080 to its route configuration
// and returns that configuration's virtual hosts.
func sidecarHostsFor(t *testing.T, addr, ns string) []string {
	t.Helper()
	c := proxyIn(t, addr, ns)
	c.Recv() // the clusters
	c.Send(&discoveryv3.DiscoveryRequest{TypeUrl: xds.ListenerType})
	r := c.Recv()
	var routes []string
	for _, a := range r.GetResources() {
		var l listenerv3.Listener
		if err := a.UnmarshalTo(&l); err != nil {
			t.Fatal(err)
		}
		if l.GetAddress().GetSocketAddress().GetPortValue() != 9080 {
			continue
		}
		var hcm hcmv3.HttpConnectionManager
		if err := l.GetFilterChains()[0].GetFilters()[0].GetTypedConfig().UnmarshalTo(&hcm); err != nil {
			t.Fatal(err)
		}
		routes = append(routes, hcm.GetRds().GetRouteConfigName())
	}
	if len(routes) != 1 {
		t.Fatalf("sidecar of %s: %d listeners on port 9080 (routes %v), want 1", ns, len(routes), routes)
	}
	c.Send(&discoveryv3.DiscoveryRequest{TypeUrl: xds.RouteType, ResourceNames: routes})
	r = c.Recv()
	if len(r.GetResources()) != 1 {
		t.Fatalf("sidecar of %s: %d route configurations for %v", ns, len(r.GetResources()), routes)
	}
	var rc routev3.RouteConfiguration
	if err := r.GetResources()[0].UnmarshalTo(&rc); err != nil {
		t.Fatal(err)
	}
	var hosts []string
	for _, vh := range rc.GetVirtualHosts() {
		hosts = append(hosts, vh.GetName())
	}
	slices.Sort(hosts)
	return hosts
}
