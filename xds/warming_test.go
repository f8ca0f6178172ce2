package xds

import (
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/proto"
)

// TestRDSRouteNameAsUnmarshal checks that rdsRouteName reads what
// unmarshaling the HttpConnectionManager would, on forms a decoder must
// merge: a repeated rds field, another route specifier between two, an
// empty name after a set one, and malformed bytes.
func TestRDSRouteNameAsUnmarshal(t *testing.T) {
	enc := func(m *hcmv3.HttpConnectionManager) []byte {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	rds := func(name string) []byte {
		return enc(&hcmv3.HttpConnectionManager{RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{
			RouteConfigName: name, ConfigSource: &corev3.ConfigSource{ResourceApiVersion: corev3.ApiVersion_V3}}}})
	}
	inline := enc(&hcmv3.HttpConnectionManager{RouteSpecifier: &hcmv3.HttpConnectionManager_RouteConfig{
		RouteConfig: &routev3.RouteConfiguration{Name: "inline"}}})
	noName := enc(&hcmv3.HttpConnectionManager{RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{}}})
	prefix := enc(&hcmv3.HttpConnectionManager{StatPrefix: "p"})
	cat := func(parts ...[]byte) []byte {
		var out []byte
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	cases := map[string][]byte{
		"rds":                  rds("r1"),
		"inline":               inline,
		"none":                 prefix,
		"rds then rds":         cat(rds("r1"), prefix, rds("r2")),
		"rds, no name":         cat(rds("r1"), noName),
		"rds then inline":      cat(rds("r1"), inline),
		"inline then rds":      cat(inline, rds("r2")),
		"rds, inline, no name": cat(rds("r1"), inline, noName),
		"truncated":            rds("r1")[:5],
		"empty":                nil,
	}
	for name, b := range cases {
		var hcm hcmv3.HttpConnectionManager
		want := ""
		if proto.Unmarshal(b, &hcm) == nil {
			want = hcm.GetRds().GetRouteConfigName()
		}
		if got := rdsRouteName(b); got != want {
			t.Errorf("%s: rdsRouteName = %q, unmarshaling gives %q", name, got, want)
		}
	}
}
