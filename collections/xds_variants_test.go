package collections

import (
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/encoding/protojson"
)

func TestClientVariant(t *testing.T) {
	for _, tc := range []struct {
		name, version, want string
	}{
		{"gRPC C-core linux Python", "C-core 29.0.0 Python 1.51.1", VariantGRPCLegacy},
		{"gRPC C-core linux C++", "C-core 32.0.0 C++ 1.54.0", VariantGRPCLegacy},
		{"gRPC C-core linux Python", "C-core 33.0.0 Python 1.55.0", ""},
		{"gRPC C-core linux Python", "unknown", ""},
		{"gRPC Go", "1.85.0", ""},
		{"gRPC Node Pure JS", "1.14.1", ""},
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
