package collections

import (
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

func TestClientVariant(t *testing.T) {
	for _, tc := range []struct {
		name, version, want string
	}{
		{"gRPC C-core linux Python", "C-core 29.0.0 Python 1.51.1", VariantGRPCLegacy},
		{"gRPC C-core linux C++", "C-core 32.0.0 C++ 1.54.0", VariantGRPCLegacy},
		{"gRPC C-core linux Python", "C-core 33.0.0 Python 1.55.0", VariantGRPC},
		{"gRPC C-core linux Python", "unknown", VariantGRPC},
		{"gRPC Go", "1.85.0", VariantGRPC},
		{"gRPC Node Pure JS", "1.14.1", VariantGRPC},
		{"gRPC Java", "1.76.0", VariantGRPC},
		{"gRPCish", "1.0", ""},
		{"envoy", "1.36.0", ""},
		{"", "", ""},
	} {
		n := &corev3.Node{UserAgentName: tc.name, UserAgentVersionType: &corev3.Node_UserAgentVersion{UserAgentVersion: tc.version}}
		if got := ClientVariant(n); got != tc.want {
			t.Errorf("ClientVariant(%q, %q) = %q, want %q", tc.name, tc.version, got, tc.want)
		}
	}
}

// TestLegacyRouteConfig: string_match headers become the older fields,
// and weighted clusters name their total; a route needing neither has no
// legacy form, and the base form is left as it was.
func TestLegacyRouteConfig(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"exact header", `{"virtualHosts":[{"routes":[{"match":{"prefix":"/","headers":[{"name":"x","stringMatch":{"exact":"a"}}]}}]}]}`,
			`{"virtualHosts":[{"routes":[{"match":{"prefix":"/","headers":[{"name":"x","exactMatch":"a"}]}}]}]}`},
		{"regex header", `{"virtualHosts":[{"routes":[{"match":{"prefix":"/","headers":[{"name":"x","stringMatch":{"safeRegex":{"regex":"a.*"}}}]}}]}]}`,
			`{"virtualHosts":[{"routes":[{"match":{"prefix":"/","headers":[{"name":"x","safeRegexMatch":{"regex":"a.*"}}]}}]}]}`},
		{"weights", `{"virtualHosts":[{"routes":[{"match":{"prefix":"/"},"route":{"weightedClusters":{"clusters":[{"name":"a","weight":1},{"name":"b","weight":3}]}}}]}]}`,
			`{"virtualHosts":[{"routes":[{"match":{"prefix":"/"},"route":{"weightedClusters":{"clusters":[{"name":"a","weight":1},{"name":"b","weight":3}],"totalWeight":4}}}]}]}`},
		{"neither", `{"virtualHosts":[{"routes":[{"match":{"prefix":"/"},"route":{"cluster":"a"}}]}]}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rc routev3.RouteConfiguration
			if err := protojson.Unmarshal([]byte(tc.in), &rc); err != nil {
				t.Fatal(err)
			}
			before := protojson.Format(&rc)
			got, changed := legacyRouteConfig(&rc)
			if after := protojson.Format(&rc); after != before {
				t.Errorf("the base form changed:\n%s", after)
			}
			if tc.want == "" {
				if changed {
					t.Errorf("legacy form %s, want none", protojson.Format(got))
				}
				return
			}
			var want routev3.RouteConfiguration
			if err := protojson.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if !changed || protojson.Format(got) != protojson.Format(&want) {
				t.Errorf("legacy form (changed %v):\n%s\nwant\n%s", changed, protojson.Format(got), protojson.Format(&want))
			}
		})
	}
}

// TestGRPCClusterForm: a cluster with HTTP/2 protocol options has a
// gRPC form, the same cluster without them, sharing its bytes; one
// without has none (gRPC clients get the base); and a cluster whose
// options are not its last field gets a form of its own.
func TestGRPCClusterForm(t *testing.T) {
	_, in, m := newTestModel()
	in.Set(service("ns", "web", map[string]string{"app": "web"}, svcPort("grpc", 9090, 9090), svcPort("http", 80, 8080)))

	h2 := ClusterName(9090, Hostname("web", "ns", "cluster.local"))
	base, _ := m.Clusters.Get(h2)
	want := base.Message()
	if len(want.TypedExtensionProtocolOptions) == 0 {
		t.Fatalf("base cluster %s has no protocol options", h2)
	}
	want.TypedExtensionProtocolOptions = nil
	name, form := GRPCClusterForm(base)
	if got := (Resource[*clusterv3.Cluster]{Packed: form}).Message(); name != h2 || !proto.Equal(got, want) {
		t.Errorf("gRPC form %s %v, want %s %v", name, protojson.Format(got), h2, protojson.Format(want))
	}
	if &form.Value[0] != &base.Packed.Value[0] {
		t.Error("the gRPC form copies the base's bytes")
	}

	http, _ := m.Clusters.Get(ClusterName(80, Hostname("web", "ns", "cluster.local")))
	if _, form := GRPCClusterForm(http); form != nil {
		t.Errorf("HTTP/1 cluster has a gRPC form %v", form)
	}

	// A field after the options: marshaled anew, still without them.
	late := base.Message()
	late.DnsLookupFamily = clusterv3.Cluster_V4_ONLY
	want.DnsLookupFamily = clusterv3.Cluster_V4_ONLY
	b := mustMarshal(late)
	opts := mustMarshal(&clusterv3.Cluster{TypedExtensionProtocolOptions: late.TypedExtensionProtocolOptions})
	late.TypedExtensionProtocolOptions = nil
	reordered := append(opts, mustMarshal(late)...) // the options first
	if len(reordered) != len(b) {
		t.Fatalf("reordered cluster is %d bytes, want %d", len(reordered), len(b))
	}
	r := Resource[*clusterv3.Cluster]{Name: h2, Packed: &anypb.Any{TypeUrl: base.Packed.TypeUrl, Value: reordered}}
	if _, form := GRPCClusterForm(r); !proto.Equal((Resource[*clusterv3.Cluster]{Packed: form}).Message(), want) {
		t.Errorf("gRPC form of the reordered cluster %v, want %v", form, protojson.Format(want))
	}
}
