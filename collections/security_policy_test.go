package collections

import (
	"strings"
	"testing"
	"time"

	securityv1beta1 "istio.io/api/security/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAuthzFailClosed checks how each action treats a rule with a field
// meshd does not support: reported, and applied so that it never lets
// through more than the author wrote.
func TestAuthzFailClosed(t *testing.T) {
	ipRule := &securityv1beta1.Rule{From: []*securityv1beta1.Rule_From{{Source: &securityv1beta1.Source{IpBlocks: []string{"10.0.0.0/8"}}}}}
	hostRule := &securityv1beta1.Rule{To: []*securityv1beta1.Rule_To{{Operation: &securityv1beta1.Operation{Hosts: []string{"a"}}}}}
	whenRule := &securityv1beta1.Rule{When: []*securityv1beta1.Condition{{Key: "request.auth.claims[iss]", Values: []string{"x"}}}}
	ok := fromPrincipals("cluster.local/ns/a/sa/b")
	for _, tc := range []struct {
		name    string
		action  securityv1beta1.AuthorizationPolicy_Action
		rules   []*securityv1beta1.Rule
		want    AuthzAction
		rules2  []string // names of the rules kept; "*" marks a match-all rule
		problem string
	}{
		{"allow, supported", securityv1beta1.AuthorizationPolicy_ALLOW, []*securityv1beta1.Rule{ok}, AuthzAllow, []string{"rules[0]"}, ""},
		{"allow drops the unsupported rule", securityv1beta1.AuthorizationPolicy_ALLOW, []*securityv1beta1.Rule{ipRule, ok}, AuthzAllow,
			[]string{"rules[1]"}, "spec.rules[0].from[0].source.ipBlocks: not supported; the rule matches nothing"},
		{"allow of nothing but unsupported allows nothing", securityv1beta1.AuthorizationPolicy_ALLOW, []*securityv1beta1.Rule{hostRule}, AuthzAllow,
			nil, "spec.rules[0].to[0].operation.hosts: not supported"},
		{"deny widens the unsupported rule", securityv1beta1.AuthorizationPolicy_DENY, []*securityv1beta1.Rule{whenRule}, AuthzDeny,
			[]string{"rules[0]*"}, `spec.rules[0].when[0]: key "request.auth.claims[iss]": not supported; the rule matches every request`},
		{"custom denies all", securityv1beta1.AuthorizationPolicy_CUSTOM, []*securityv1beta1.Rule{ok}, AuthzDeny,
			[]string{"custom*"}, "spec.action CUSTOM: not supported"},
		{"audit has no effect", securityv1beta1.AuthorizationPolicy_AUDIT, []*securityv1beta1.Rule{ok}, AuthzAudit, nil, "AUDIT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := buildAuthzPolicy(authzPolicy("ns", "p", "app", tc.action, tc.rules...), "istio-system")
			if p.Action != tc.want {
				t.Errorf("action %s, want %s", p.Action, tc.want)
			}
			var got []string
			for _, r := range p.Rules {
				name := strings.TrimPrefix(r.Name, "ns/p/")
				if matchAll().String() == r.Policy.String() {
					name += "*"
				}
				got = append(got, name)
			}
			if strings.Join(got, ",") != strings.Join(tc.rules2, ",") {
				t.Errorf("rules %v, want %v", got, tc.rules2)
			}
			problems := strings.Join(p.Problems, "\n")
			if (tc.problem == "") != (problems == "") || !strings.Contains(problems, tc.problem) {
				t.Errorf("problems %q, want %q", problems, tc.problem)
			}
		})
	}
}

// TestResolveMTLS checks Istio's precedence between mesh, namespace and
// workload PeerAuthentications.
func TestResolveMTLS(t *testing.T) {
	at := func(p *PeerAuthn, minutes int) PeerAuthn {
		p.Created = time.Unix(0, 0).Add(time.Duration(minutes) * time.Minute)
		return *p
	}
	mk := func(ns, name, app string, mode securityv1beta1.PeerAuthentication_MutualTLS_Mode, ports map[uint32]*securityv1beta1.PeerAuthentication_MutualTLS) *PeerAuthn {
		pa := peerAuthn(ns, name, app, mode)
		pa.Spec.PortLevelMtls = ports
		pa.CreationTimestamp = metav1.Time{}
		return buildPeerAuthn(pa, "istio-system")
	}
	const strict, permissive, disable, unset = securityv1beta1.PeerAuthentication_MutualTLS_STRICT,
		securityv1beta1.PeerAuthentication_MutualTLS_PERMISSIVE, securityv1beta1.PeerAuthentication_MutualTLS_DISABLE,
		securityv1beta1.PeerAuthentication_MutualTLS_UNSET
	mesh := at(mk("istio-system", "mesh", "", strict, nil), 0)
	ns := at(mk("ns", "ns", "", permissive, nil), 1)
	older := at(mk("ns", "older", "", disable, nil), 0)
	wl := at(mk("ns", "wl", "web", unset, map[uint32]*securityv1beta1.PeerAuthentication_MutualTLS{9000: {Mode: disable}}), 2)
	for _, tc := range []struct {
		name            string
		mesh, ns, sel   []PeerAuthn
		mode, port9000  MTLSMode
		decidingPolices string
	}{
		{"none", nil, nil, nil, MTLSPermissive, MTLSPermissive, ""},
		{"mesh", []PeerAuthn{mesh}, nil, nil, MTLSStrict, MTLSStrict, "istio-system/mesh"},
		{"namespace over mesh", []PeerAuthn{mesh}, []PeerAuthn{ns}, nil, MTLSPermissive, MTLSPermissive, "istio-system/mesh,ns/ns"},
		{"oldest of a level", nil, []PeerAuthn{ns, older}, nil, MTLSDisable, MTLSDisable, "ns/older"},
		{"unset workload inherits, its port overrides", []PeerAuthn{mesh}, nil, []PeerAuthn{wl}, MTLSStrict, MTLSDisable, "istio-system/mesh,ns/wl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := resolveMTLS(tc.mesh, tc.ns, tc.sel)
			if got.Mode != tc.mode || got.PortMode(9000) != tc.port9000 || strings.Join(got.Policies, ",") != tc.decidingPolices {
				t.Errorf("got mode %s, port 9000 %s, policies %v; want %s, %s, %s",
					got.Mode, got.PortMode(9000), got.Policies, tc.mode, tc.port9000, tc.decidingPolices)
			}
		})
	}
}
