package collections

import (
	"bytes"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	"google.golang.org/protobuf/proto"
)

// TestPackServerListenerAsMarshal checks that a server listener
// serialized field by field has the bytes and type URL that marshalling
// the same listener, built as a proto, gives, with and without shared
// chains, for every mode, with and without RBAC, on IPv4 and IPv6.
func TestPackServerListenerAsMarshal(t *testing.T) {
	rule := AuthzRule{Name: "ns/p/rules[0]", Policy: &rbacv3.Policy{Permissions: []*rbacv3.Permission{
		{Rule: &rbacv3.Permission_Any{Any: true}}}}}
	cases := []struct {
		name string
		ip   string
		port int32
		mode MTLSMode
		rbac WorkloadRBAC
	}{
		{"plain", "10.0.0.1", 8080, MTLSPermissive, WorkloadRBAC{}},
		{"plain again, shared chain", "10.0.0.2", 8080, MTLSPermissive, WorkloadRBAC{}},
		{"strict", "10.0.0.1", 9090, MTLSStrict, WorkloadRBAC{}},
		{"disabled, ipv6", "fd00::1", 7070, MTLSDisable, WorkloadRBAC{}},
		{"deny", "10.0.0.3", 8080, MTLSStrict, WorkloadRBAC{Deny: []AuthzRule{rule}}},
		{"allow nothing", "10.0.0.4", 8080, MTLSPermissive, WorkloadRBAC{HasAllow: true}},
		{"deny and allow", "10.0.0.5", 8080, MTLSStrict, WorkloadRBAC{Deny: []AuthzRule{rule}, Allow: []AuthzRule{rule}, HasAllow: true}},
	}
	for _, tc := range cases {
		name := ServerListenerName(tc.ip, tc.port)
		got := packServerListener(name, tc.ip, tc.port, serverChain(tc.port, tc.mode, tc.rbac))
		want := mustAny(&listenerv3.Listener{
			Name:             name,
			Address:          socketAddress(tc.ip, uint32(tc.port)),
			TrafficDirection: corev3.TrafficDirection_INBOUND,
			FilterChains:     []*listenerv3.FilterChain{buildServerChain(tc.port, tc.mode, tc.rbac)},
		})
		if got.TypeUrl != want.TypeUrl || !bytes.Equal(got.Value, want.Value) {
			t.Errorf("%s: packed %s %x, marshalled %s %x", tc.name, got.TypeUrl, got.Value, want.TypeUrl, want.Value)
		}
		var l listenerv3.Listener
		if err := got.UnmarshalTo(&l); err != nil || l.GetName() != name || len(l.GetFilterChains()) != 1 ||
			(l.GetFilterChains()[0].GetTransportSocket() != nil) != (tc.mode == MTLSStrict) {
			t.Errorf("%s: decodes to %v (%v)", tc.name, &l, err)
		}
		if !proto.Equal(got, want) {
			t.Errorf("%s: packed and marshalled Any differ", tc.name)
		}
	}
}
