package kube

import (
	"testing"

	securityv1beta1 "istio.io/api/security/v1beta1"
	typev1beta1 "istio.io/api/type/v1beta1"
	securityv1 "istio.io/client-go/pkg/apis/security/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources/kube/kubetest"
)

// TestKubeIstioPolicies reads PeerAuthentications and AuthorizationPolicies
// from a real API server serving Istio's own CRDs (their schemas and
// validation), through the typed Istio informers.
func TestKubeIstioPolicies(t *testing.T) {
	c := clients(t)
	if err := kubetest.InstallIstioSecurityCRDs(t.Context(), needEnv(t).Config); err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t, c.Kube)
	src := New(krt.NewGraph(), c, WithDefaultWatch(Watch{Namespace: ns}))
	in := src.Inputs()
	run(t, src, in.PeerAuthentications, in.AuthorizationPolicies)

	pa := &securityv1.PeerAuthentication{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}
	pa.Spec.Mtls = &securityv1beta1.PeerAuthentication_MutualTLS{Mode: securityv1beta1.PeerAuthentication_MutualTLS_STRICT}
	pas := c.Istio.SecurityV1().PeerAuthentications(ns)
	if _, err := pas.Create(t.Context(), pa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ap := &securityv1.AuthorizationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "deny-front", Namespace: ns}}
	ap.Spec.Selector = &typev1beta1.WorkloadSelector{MatchLabels: map[string]string{"app": "echo"}}
	ap.Spec.Action = securityv1beta1.AuthorizationPolicy_DENY
	ap.Spec.Rules = []*securityv1beta1.Rule{{From: []*securityv1beta1.Rule_From{{Source: &securityv1beta1.Source{
		Principals: []string{"cluster.local/ns/" + ns + "/sa/front"}}}}}}
	if _, err := c.Istio.SecurityV1().AuthorizationPolicies(ns).Create(t.Context(), ap, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	key := ns + "/default"
	eventually(t, "PeerAuthentication STRICT", func() bool {
		p, ok := in.PeerAuthentications.Get(key)
		return ok && p.Spec.GetMtls().GetMode() == securityv1beta1.PeerAuthentication_MutualTLS_STRICT
	})
	eventually(t, "AuthorizationPolicy DENY of front", func() bool {
		p, ok := in.AuthorizationPolicies.Get(ns + "/deny-front")
		return ok && p.Spec.GetAction() == securityv1beta1.AuthorizationPolicy_DENY &&
			p.Spec.GetSelector().GetMatchLabels()["app"] == "echo" && len(p.Spec.GetRules()) == 1
	})

	cur, err := pas.Get(t.Context(), "default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.Mtls.Mode = securityv1beta1.PeerAuthentication_MutualTLS_PERMISSIVE
	if _, err := pas.Update(t.Context(), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "PeerAuthentication PERMISSIVE", func() bool {
		p, ok := in.PeerAuthentications.Get(key)
		return ok && p.Spec.GetMtls().GetMode() == securityv1beta1.PeerAuthentication_MutualTLS_PERMISSIVE
	})
	if err := pas.Delete(t.Context(), "default", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "PeerAuthentication deleted", func() bool { _, ok := in.PeerAuthentications.Get(key); return !ok })
}
