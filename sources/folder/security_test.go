package folder

import (
	"strings"
	"testing"
	"testing/fstest"

	securityv1beta1 "istio.io/api/security/v1beta1"

	"github.com/meshd/meshd/krt"
)

// TestIstioSecurityPolicies loads Istio's security policies as written for
// Istio, into the real API types, and reports a misspelt field.
func TestIstioSecurityPolicies(t *testing.T) {
	fsys := fstest.MapFS{
		"pa.yaml": {Data: []byte(`apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: strict, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  mtls: {mode: STRICT}
  portLevelMtls:
    8080: {mode: PERMISSIVE}
`)},
		"ap.yaml": {Data: []byte(`apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: allow-front, namespace: shop}
spec:
  action: ALLOW
  rules:
  - from: [{source: {principals: ["cluster.local/ns/shop/sa/front"]}}]
    to: [{operation: {paths: ["/grpc.health.v1.Health/*"], methods: ["POST"]}}]
    when: [{key: "request.headers[x-user]", values: ["alice"]}]
`)},
		"typo.yaml": {Data: []byte(`apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: typo, namespace: shop}
spec:
  actoin: DENY
`)},
	}
	s := NewFS(krt.NewGraph(), fsys)
	if err := s.Load(); err != nil {
		t.Fatal(err)
	}
	in := s.Inputs()
	pa, ok := in.PeerAuthentications.Get("shop/strict")
	if !ok {
		t.Fatalf("no PeerAuthentication; problems %v", s.Problems())
	}
	if pa.Spec.GetMtls().GetMode() != securityv1beta1.PeerAuthentication_MutualTLS_STRICT ||
		pa.Spec.GetPortLevelMtls()[8080].GetMode() != securityv1beta1.PeerAuthentication_MutualTLS_PERMISSIVE ||
		pa.Spec.GetSelector().GetMatchLabels()["app"] != "web" {
		t.Errorf("PeerAuthentication spec = %v", &pa.Spec)
	}
	ap, ok := in.AuthorizationPolicies.Get("shop/allow-front")
	if !ok {
		t.Fatalf("no AuthorizationPolicy; problems %v", s.Problems())
	}
	r := ap.Spec.GetRules()[0]
	if ap.Spec.GetAction() != securityv1beta1.AuthorizationPolicy_ALLOW ||
		r.GetFrom()[0].GetSource().GetPrincipals()[0] != "cluster.local/ns/shop/sa/front" ||
		r.GetTo()[0].GetOperation().GetPaths()[0] != "/grpc.health.v1.Health/*" ||
		r.GetWhen()[0].GetKey() != "request.headers[x-user]" {
		t.Errorf("AuthorizationPolicy spec = %v", &ap.Spec)
	}
	checkRejected(t, s)
}

// checkRejected checks that typo.yaml, with an unknown field, did not load
// and is reported.
func checkRejected(t *testing.T, s *Source) {
	t.Helper()
	if _, ok := s.Inputs().AuthorizationPolicies.Get("shop/typo"); ok {
		t.Error("a policy with an unknown field loaded")
	}
	var found bool
	for _, p := range s.Problems() {
		found = found || (strings.HasSuffix(p.Path, "typo.yaml") && strings.Contains(p.Message, "actoin"))
	}
	if !found {
		t.Errorf("problems %v lack the unknown field of typo.yaml", s.Problems())
	}
}
