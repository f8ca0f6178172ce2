package collections

import (
	"fmt"
	"strings"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	rbacfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	securityv1beta1 "istio.io/api/security/v1beta1"
	typev1beta1 "istio.io/api/type/v1beta1"
	securityv1 "istio.io/client-go/pkg/apis/security/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
)

// securityModel is a test model with policy inputs.
type securityModel struct {
	g  *krt.Graph
	in sources.StaticInputs
	m  *Model
}

func newSecurityModel() securityModel {
	g, in, m := newTestModel()
	return securityModel{g: g, in: in, m: m}
}

func selector(app string) *typev1beta1.WorkloadSelector {
	if app == "" {
		return nil
	}
	return &typev1beta1.WorkloadSelector{MatchLabels: map[string]string{"app": app}}
}

func peerAuthn(ns, name, app string, mode securityv1beta1.PeerAuthentication_MutualTLS_Mode) *securityv1.PeerAuthentication {
	return &securityv1.PeerAuthentication{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: securityv1beta1.PeerAuthentication{Selector: selector(app), Mtls: &securityv1beta1.PeerAuthentication_MutualTLS{Mode: mode}}}
}

func authzPolicy(ns, name, app string, action securityv1beta1.AuthorizationPolicy_Action, rules ...*securityv1beta1.Rule) *securityv1.AuthorizationPolicy {
	return &securityv1.AuthorizationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: securityv1beta1.AuthorizationPolicy{Selector: selector(app), Action: action, Rules: rules}}
}

func fromPrincipals(p ...string) *securityv1beta1.Rule {
	return &securityv1beta1.Rule{From: []*securityv1beta1.Rule_From{{Source: &securityv1beta1.Source{Principals: p}}}}
}

// listenerSummary describes a server listener: "tls" or "plain", then its
// RBAC filters with their policy names.
func listenerSummary(t *testing.T, l *listenerv3.Listener) string {
	t.Helper()
	fc := l.FilterChains[0]
	out := "plain"
	if fc.TransportSocket != nil {
		var d tlsv3.DownstreamTlsContext
		if err := fc.TransportSocket.GetTypedConfig().UnmarshalTo(&d); err != nil || !d.RequireClientCertificate.GetValue() {
			t.Fatalf("transport socket %v (%v)", fc.TransportSocket, err)
		}
		out = "tls"
	}
	var hcm hcmv3.HttpConnectionManager
	if err := fc.Filters[0].GetTypedConfig().UnmarshalTo(&hcm); err != nil {
		t.Fatal(err)
	}
	for _, f := range hcm.HttpFilters[:len(hcm.HttpFilters)-1] {
		var r rbacfilterv3.RBAC
		if err := f.GetTypedConfig().UnmarshalTo(&r); err != nil {
			t.Fatal(err)
		}
		names := make([]string, 0)
		for n := range r.Rules.Policies {
			names = append(names, n)
		}
		sortStrings(names)
		out += fmt.Sprintf(" %s%v", r.Rules.Action, names)
	}
	return out
}

// TestPolicyChangeTouchesSelectedListeners changes one policy at a time
// and counts what moved: only the workloads the policy applies to are
// recomputed, and only their listeners change.
func TestPolicyChangeTouchesSelectedListeners(t *testing.T) {
	s := newSecurityModel()
	populate(s.in, "ns", 20, 3) // 60 workloads, each serving two ports
	if n := len(s.m.ServerListeners.List()); n != 120 {
		t.Fatalf("%d server listeners, want 120", n)
	}
	for _, l := range s.m.ServerListeners.List() {
		if !l.NamedOnly {
			t.Fatalf("server listener %s is not NamedOnly: wildcard subscribers would be sent it", l.Name)
		}
	}
	step := func(what string, change func(), want map[string][2]uint64) {
		t.Helper()
		expectMoved(t, s.g, what, change, want)
	}
	deny := authzPolicy("ns", "deny", "svc-3", securityv1beta1.AuthorizationPolicy_DENY, fromPrincipals("cluster.local/ns/x/sa/y"))
	step("selector policy", func() { s.in.Set(deny) }, map[string][2]uint64{
		"test/authorizationpolicies": {0, 1}, "AuthorizationPolicies": {1, 1},
		"AuthorizationPolicyScopes": {1, 1}, "SecurityPolicies": {1, 1}, "ServerListeners": {3, 6}, "Listeners": {6, 6}, "LegacyServerListeners": {6, 0},
	})
	l, _ := s.m.ServerListeners.Get(ServerListenerName("10.0.3.1", 9090))
	if got := listenerSummary(t, l.Message()); got != "plain DENY[ns/deny/rules[0]]" {
		t.Errorf("svc-3 listener: %s", got)
	}
	step("strict for svc-4", func() {
		s.in.Set(peerAuthn("ns", "strict", "svc-4", securityv1beta1.PeerAuthentication_MutualTLS_STRICT))
	}, map[string][2]uint64{
		"test/peerauthentications": {0, 1}, "PeerAuthentications": {1, 1},
		"PeerAuthenticationScopes": {1, 1}, "SecurityPolicies": {1, 1}, "ServerListeners": {3, 6}, "Listeners": {6, 6}, "LegacyServerListeners": {6, 0},
		// Both ports' clusters switch to mTLS.
		"ClusterSecurity": {2, 2}, "Clusters": {1, 2}, "AllClusters": {2, 2},
	})
	c, _ := s.m.Clusters.Get("outbound|9090||svc-4.ns.svc.cluster.local")
	if ts := c.Message().GetTransportSocket(); ts == nil {
		t.Error("svc-4 cluster has no transport socket under STRICT")
	} else if body := ts.String(); !strings.Contains(body, "spiffe://cluster.local/ns/ns/sa/sa-svc-4-0") {
		t.Errorf("svc-4 cluster's TLS lacks the workload's SAN: %s", body)
	}
	checkBroadPolicies(t, s, step)
}

// checkBroadPolicies goes on from TestPolicyChangeTouchesSelectedListeners
// with policies without a selector: of the namespace, of another one, and
// of the mesh.
func checkBroadPolicies(t *testing.T, s securityModel, step func(what string, change func(), want map[string][2]uint64)) {
	t.Helper()
	// A namespace-wide policy applies to every workload of the namespace.
	step("namespace policy", func() {
		s.in.Set(authzPolicy("ns", "allow-all", "", securityv1beta1.AuthorizationPolicy_ALLOW, &securityv1beta1.Rule{}))
	}, map[string][2]uint64{
		"test/authorizationpolicies": {0, 1}, "AuthorizationPolicies": {1, 1},
		"AuthorizationPolicyScopes": {1, 1}, "SecurityPolicies": {1, 1}, "ServerListeners": {60, 120}, "Listeners": {120, 120}, "LegacyServerListeners": {120, 0},
	})
	// A policy of another namespace touches nothing here.
	step("other namespace", func() {
		s.in.Set(authzPolicy("other", "deny", "", securityv1beta1.AuthorizationPolicy_DENY, fromPrincipals("*")))
	}, map[string][2]uint64{"test/authorizationpolicies": {0, 1}, "AuthorizationPolicies": {1, 1},
		"AuthorizationPolicyScopes": {1, 1}, "SecurityPolicies": {1, 1}})
	l, _ := s.m.ServerListeners.Get(ServerListenerName("10.0.4.1", 8080))
	if got := listenerSummary(t, l.Message()); got != "tls ALLOW[ns/allow-all/rules[0]]" {
		t.Errorf("svc-4 listener: %s", got)
	}
	// A mesh-wide policy reaches every workload through the one item
	// they all read, and no cluster: RBAC is not what clients depend on.
	step("mesh-wide policy", func() {
		s.in.Set(authzPolicy("istio-system", "deny-z", "", securityv1beta1.AuthorizationPolicy_DENY, fromPrincipals("cluster.local/ns/x/sa/z")))
	}, map[string][2]uint64{
		"test/authorizationpolicies": {0, 1}, "AuthorizationPolicies": {1, 1},
		"AuthorizationPolicyScopes": {1, 1}, "SecurityPolicies": {1, 1}, "MeshSecurity": {1, 1}, "ServerListeners": {60, 120}, "Listeners": {120, 120}, "LegacyServerListeners": {120, 0},
	})
	l, _ = s.m.ServerListeners.Get(ServerListenerName("10.0.4.1", 8080))
	if got := listenerSummary(t, l.Message()); got != "tls DENY[istio-system/deny-z/rules[0]] ALLOW[ns/allow-all/rules[0]]" {
		t.Errorf("svc-4 listener: %s", got)
	}
}
