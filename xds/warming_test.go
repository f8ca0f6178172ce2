package xds

import (
	"slices"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
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

// TestWarmsOnAsUnmarshal checks that warmsOn reads from the bytes what
// the decoded Cluster or Listener says: EDS or not, the service name or
// the cluster's, the RDS names of the API listener, the filter chains and
// the default chain, in that order, on forms a decoder must merge.
func TestWarmsOnAsUnmarshal(t *testing.T) {
	enc := func(m proto.Message) []byte {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	hcm := func(route string) *anypb.Any {
		a, err := anypb.New(&hcmv3.HttpConnectionManager{RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{
			Rds: &hcmv3.Rds{RouteConfigName: route}}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	other, err := anypb.New(&corev3.Address{})
	if err != nil {
		t.Fatal(err)
	}
	chain := func(configs ...*anypb.Any) *listenerv3.FilterChain {
		fc := &listenerv3.FilterChain{}
		for _, c := range configs {
			fc.Filters = append(fc.Filters, &listenerv3.Filter{Name: "f", ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: c}})
		}
		return fc
	}
	eds := &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS}
	cases := map[string]struct {
		typeURL string
		raw     []byte
	}{
		"eds, service name": {ClusterType, enc(&clusterv3.Cluster{Name: "c", ClusterDiscoveryType: eds,
			EdsClusterConfig: &clusterv3.Cluster_EdsClusterConfig{ServiceName: "s"}})},
		"eds, no config": {ClusterType, enc(&clusterv3.Cluster{Name: "c", ClusterDiscoveryType: eds})},
		"static":         {ClusterType, enc(&clusterv3.Cluster{Name: "c"})},
		"custom type": {ClusterType, append(enc(&clusterv3.Cluster{Name: "c", ClusterDiscoveryType: eds}),
			enc(&clusterv3.Cluster{ClusterDiscoveryType: &clusterv3.Cluster_ClusterType{ClusterType: &clusterv3.Cluster_CustomClusterType{Name: "x"}}})...)},
		"eds configs merge": {ClusterType, append(enc(&clusterv3.Cluster{Name: "c", ClusterDiscoveryType: eds,
			EdsClusterConfig: &clusterv3.Cluster_EdsClusterConfig{ServiceName: "s"}}),
			enc(&clusterv3.Cluster{Name: "d", EdsClusterConfig: &clusterv3.Cluster_EdsClusterConfig{EdsConfig: &corev3.ConfigSource{}}})...)},
		"api listener": {ListenerType, enc(&listenerv3.Listener{Name: "l", ApiListener: &listenerv3.ApiListener{ApiListener: hcm("r")}})},
		"chains and default": {ListenerType, enc(&listenerv3.Listener{Name: "l",
			FilterChains:       []*listenerv3.FilterChain{chain(hcm("a"), other), chain(hcm("b"))},
			DefaultFilterChain: chain(hcm("d"))})},
		"not an hcm": {ListenerType, enc(&listenerv3.Listener{Name: "l", FilterChains: []*listenerv3.FilterChain{chain(other)}})},
		"filter config replaced": {ListenerType, enc(&listenerv3.Listener{FilterChains: []*listenerv3.FilterChain{{
			Filters: []*listenerv3.Filter{{Name: "f", ConfigType: &listenerv3.Filter_ConfigDiscovery{}}}}}})},
		"route type":  {RouteType, enc(&listenerv3.Listener{ApiListener: &listenerv3.ApiListener{ApiListener: hcm("r")}})},
		"truncated":   {ListenerType, enc(&listenerv3.Listener{Name: "l", ApiListener: &listenerv3.ApiListener{ApiListener: hcm("r")}})[:7]},
		"empty":       {ClusterType, nil},
		"not decoded": {ClusterType, []byte{0xff}},
	}
	for name, tc := range cases {
		got := warmsOn(tc.typeURL, tc.raw)
		if want := decodedWarms(tc.typeURL, tc.raw); !slices.Equal(got, want) {
			t.Errorf("%s: warmsOn = %q, decoding gives %q", name, got, want)
		}
	}
}

// decodedWarms is what warmsOn reads, from the decoded message.
func decodedWarms(typeURL string, raw []byte) []string {
	switch typeURL {
	case ClusterType:
		var c clusterv3.Cluster
		if proto.Unmarshal(raw, &c) != nil || c.GetType() != clusterv3.Cluster_EDS {
			return nil
		}
		if n := c.GetEdsClusterConfig().GetServiceName(); n != "" {
			return []string{n}
		}
		return []string{c.GetName()}
	case ListenerType:
		var l listenerv3.Listener
		if proto.Unmarshal(raw, &l) != nil {
			return nil
		}
		var out []string
		add := func(a *anypb.Any) {
			if a.MessageIs((*hcmv3.HttpConnectionManager)(nil)) {
				if n := rdsRouteName(a.GetValue()); n != "" {
					out = append(out, n)
				}
			}
		}
		add(l.GetApiListener().GetApiListener())
		for _, fc := range append(l.GetFilterChains(), l.GetDefaultFilterChain()) {
			for _, f := range fc.GetFilters() {
				add(f.GetTypedConfig())
			}
		}
		return out
	}
	return nil
}
