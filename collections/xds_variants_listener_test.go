package collections

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	rbacfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	securityv1beta1 "istio.io/api/security/v1beta1"
)

// TestLegacyServerListener: a server listener whose RBAC policies match
// a header with string_match, at any depth, in a permission or a
// principal, of a DENY or an ALLOW filter, has a legacy form that says
// the same with the older fields and is otherwise the same listener; one
// without (no RBAC, no header, a present_match, a case-insensitive
// match, which no older field says) has none. The base is not changed.
func TestLegacyServerListener(t *testing.T) {
	const (
		method    = `{"permissions":[{"header":{"name":":method","stringMatch":{"exact":"POST"}}}],"principals":[{"any":true}]}`
		methodOld = `{"permissions":[{"header":{"name":":method","exactMatch":"POST"}}],"principals":[{"any":true}]}`
		nested    = `{"permissions":[{"andRules":{"rules":[{"urlPath":{"path":{"prefix":"/a"}}},{"notRule":{"orRules":{"rules":[` +
			`{"header":{"name":"x","stringMatch":{"prefix":"p"}}},{"header":{"name":"y","stringMatch":{"suffix":"s"}}},` +
			`{"header":{"name":"z","stringMatch":{"safeRegex":{"regex":"r.*"}}}},{"header":{"name":"w","stringMatch":{"contains":"c"}}}]}}}]}}],` +
			`"principals":[{"any":true}]}`
		nestedOld = `{"permissions":[{"andRules":{"rules":[{"urlPath":{"path":{"prefix":"/a"}}},{"notRule":{"orRules":{"rules":[` +
			`{"header":{"name":"x","prefixMatch":"p"}},{"header":{"name":"y","suffixMatch":"s"}},` +
			`{"header":{"name":"z","safeRegexMatch":{"regex":"r.*"}}},{"header":{"name":"w","containsMatch":"c"}}]}}}]}}],` +
			`"principals":[{"any":true}]}`
		principal    = `{"permissions":[{"any":true}],"principals":[{"andIds":{"ids":[{"notId":{"header":{"name":"x","stringMatch":{"exact":"a"}}}}]}}]}`
		principalOld = `{"permissions":[{"any":true}],"principals":[{"andIds":{"ids":[{"notId":{"header":{"name":"x","exactMatch":"a"}}}]}}]}`
		present      = `{"permissions":[{"header":{"name":"x","presentMatch":true}}],"principals":[{"any":true}]}`
		ignoreCase   = `{"permissions":[{"header":{"name":"x","stringMatch":{"exact":"a","ignoreCase":true}}}],"principals":[{"any":true}]}`
		path         = `{"permissions":[{"urlPath":{"path":{"exact":"/a"}}}],"principals":[{"authenticated":{"principalName":{"exact":"spiffe://x"}}}]}`
	)
	for _, tc := range []struct {
		name        string
		mode        MTLSMode
		deny, allow []string // policies, as JSON
		want        [2][]string
	}{
		{"no RBAC", MTLSStrict, nil, nil, [2][]string{}},
		{"allow of a method", MTLSStrict, nil, []string{method}, [2][]string{nil, {methodOld}}},
		{"nested, plaintext", MTLSPermissive, []string{nested}, nil, [2][]string{{nestedOld}, nil}},
		{"principal header", MTLSStrict, []string{principal}, []string{path}, [2][]string{{principalOld}, {path}}},
		{"deny and allow", MTLSStrict, []string{method, path}, []string{nested}, [2][]string{{methodOld, path}, {nestedOld}}},
		{"present only", MTLSStrict, []string{present}, nil, [2][]string{}},
		{"ignore case", MTLSStrict, nil, []string{ignoreCase}, [2][]string{}},
		{"paths only", MTLSStrict, []string{path}, []string{path}, [2][]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := testServerListener(t, tc.mode, tc.deny, tc.allow)
			before := bytes.Clone(base.Packed.GetValue())
			got, changed := legacyServerListener(base)
			if !bytes.Equal(base.Packed.GetValue(), before) {
				t.Error("the base form changed")
			}
			if tc.want[0] == nil && tc.want[1] == nil {
				if changed {
					t.Errorf("legacy form %v, want none", got.Message())
				}
				return
			}
			want := testServerListener(t, tc.mode, tc.want[0], tc.want[1])
			if !changed || !proto.Equal(got.Message(), want.Message()) {
				t.Errorf("legacy form (changed %v):\n%v\nwant\n%v", changed, got.Message(), want.Message())
			}
			if got.Name != base.Name || !slices.Equal(got.VisibleTo, base.VisibleTo) || !got.NamedOnly {
				t.Errorf("legacy form %q visible to %v, named only %v; want the base's", got.Name, got.VisibleTo, got.NamedOnly)
			}
		})
	}
}

// testServerListener returns the server listener of 10.0.0.1:8080 in
// mode with RBAC filters of the deny and allow policies (JSON), an ALLOW
// filter only when allow has any.
func testServerListener(t *testing.T, mode MTLSMode, deny, allow []string) Resource[*listenerv3.Listener] {
	t.Helper()
	rules := func(policies []string) []AuthzRule {
		var out []AuthzRule
		for i, js := range policies {
			var p rbacv3.Policy
			if err := protojson.Unmarshal([]byte(js), &p); err != nil {
				t.Fatalf("%s: %v", js, err)
			}
			out = append(out, AuthzRule{Name: "shop/p/rules[" + strconv.Itoa(i) + "]", Policy: &p})
		}
		return out
	}
	rbac := WorkloadRBAC{Deny: rules(deny), Allow: rules(allow), HasAllow: len(allow) > 0}
	name := ServerListenerName("10.0.0.1", 8080)
	return Resource[*listenerv3.Listener]{Name: name, Packed: packServerListener(name, "10.0.0.1", 8080, serverChain(8080, mode, rbac)),
		VisibleTo: []string{"shop"}, NamedOnly: true}
}

// TestLegacyServerListenersFollowPolicies: an AuthorizationPolicy with
// methods gives the listeners of the workloads it selects, and theirs
// only, a legacy form, with the method in exact_match while the base
// keeps string_match; removing the policy removes those forms.
func TestLegacyServerListenersFollowPolicies(t *testing.T) {
	s := newSecurityModel()
	populate(s.in, "ns", 20, 3)
	if n := s.m.LegacyServerListeners.Len(); n != 0 {
		t.Fatalf("%d legacy server listeners without a policy, want none", n)
	}
	post := &securityv1beta1.Rule{To: []*securityv1beta1.Rule_To{{Operation: &securityv1beta1.Operation{Methods: []string{"POST"}}}}}
	allow := authzPolicy("ns", "post", "svc-3", securityv1beta1.AuthorizationPolicy_ALLOW, post)
	expectMoved(t, s.g, "methods policy", func() { s.in.Set(allow) }, map[string][2]uint64{
		"test/authorizationpolicies": {0, 1}, "AuthorizationPolicies": {1, 1}, "AuthorizationPolicyScopes": {1, 1},
		"SecurityPolicies": {1, 1}, "ServerListeners": {3, 6}, "Listeners": {6, 6}, "LegacyServerListeners": {6, 6},
	})
	name := ServerListenerName("10.0.3.1", 9090)
	base, _ := s.m.ServerListeners.Get(name)
	legacy, ok := s.m.LegacyServerListeners.Get(name)
	if !ok {
		t.Fatalf("%s has no legacy form", name)
	}
	for what, l := range map[string]Resource[*listenerv3.Listener]{"base": base, "legacy": legacy} {
		js := compactJSON(t, rbacPolicies(t, l.Message()))
		wantOld := what == "legacy"
		if hasOld := strings.Contains(js, `"exactMatch":"POST"`); hasOld != wantOld || strings.Contains(js, "stringMatch") == wantOld {
			t.Errorf("%s form's RBAC: %s", what, js)
		}
	}
	expectMoved(t, s.g, "policy removed", func() { s.in.Delete(allow) }, map[string][2]uint64{
		"test/authorizationpolicies": {0, 1}, "AuthorizationPolicies": {0, 1}, "AuthorizationPolicyScopes": {0, 1},
		"SecurityPolicies": {1, 1}, "ServerListeners": {3, 6}, "Listeners": {6, 6}, "LegacyServerListeners": {6, 6},
	})
	if n := s.m.LegacyServerListeners.Len(); n != 0 {
		t.Errorf("%d legacy server listeners once the policy is gone, want none", n)
	}
}

// compactJSON returns m as JSON without whitespace: protojson varies
// its spacing from build to build on purpose, so a substring match
// needs the compact form.
func compactJSON(t *testing.T, m proto.Message) string {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, []byte(protojson.Format(m))); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// rbacPolicies returns the RBAC rules of the first RBAC filter of l's
// chain.
func rbacPolicies(t *testing.T, l *listenerv3.Listener) *rbacv3.RBAC {
	t.Helper()
	var hcm hcmv3.HttpConnectionManager
	if err := l.GetFilterChains()[0].GetFilters()[0].GetTypedConfig().UnmarshalTo(&hcm); err != nil {
		t.Fatal(err)
	}
	var r rbacfilterv3.RBAC
	if err := hcm.GetHttpFilters()[0].GetTypedConfig().UnmarshalTo(&r); err != nil {
		t.Fatal(err)
	}
	return r.GetRules()
}
