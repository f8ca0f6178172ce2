package collections

import (
	"testing"

	securityv1beta1 "istio.io/api/security/v1beta1"

	"github.com/meshd/meshd/krt"
)

// TestSecurityCostsPerServiceNotPerPod builds the model, with server
// listeners on demand and none demanded, over 20 services of 3 pods and
// again of 9 pods, under a selector and a namespace PeerAuthentication:
// only the pods' own collections compute per pod. No collection derives
// every workload's security, and ClusterSecurity reads per service, not
// per pod, so its computations and its reads are the same at either size.
func TestSecurityCostsPerServiceNotPerPod(t *testing.T) {
	type cost struct {
		recomputes uint64
		reads      int
	}
	costs := func(podsPer int) map[string]cost {
		g := krt.NewGraph()
		in := newTestInputs(g)
		demand := krt.NewStatic[string](g, krt.WithKey(func(n string) string { return n }))
		Build(g, in.Inputs(), WithServerListenerDemand(demand))
		in.Set(peerAuthn("ns", "strict", "svc-4", securityv1beta1.PeerAuthentication_MutualTLS_STRICT))
		in.Set(peerAuthn("ns", "default", "", securityv1beta1.PeerAuthentication_MutualTLS_PERMISSIVE))
		populate(in, "ns", 20, podsPer)
		info := g.Describe()
		reads := map[int]int{}
		for _, e := range info.Edges {
			reads[e.To] += e.Reads
		}
		out := map[string]cost{}
		for _, c := range info.Collections {
			out[c.Name] = cost{c.Recomputes, reads[c.ID]}
		}
		return out
	}
	small, large := costs(3), costs(9)
	perPod := map[string]bool{"test/pods": true, "Workloads": true}
	for name, c := range large {
		if !perPod[name] && c.recomputes != small[name].recomputes {
			t.Errorf("%s: %d computations at 9 pods a service, %d at 3: it computes per pod", name, c.recomputes, small[name].recomputes)
		}
	}
	if c := large["ClusterSecurity"]; c.reads != small["ClusterSecurity"].reads || c.reads == 0 {
		t.Errorf("ClusterSecurity keeps %d reads at 9 pods a service, %d at 3; want the same", c.reads, small["ClusterSecurity"].reads)
	}
}

// TestWorkloadSecurityLookup checks Model.WorkloadSecurity, derived on
// each call, against the security a transformation derives of every
// workload, through policy changes; and that a workload that does not
// exist has none.
func TestWorkloadSecurityLookup(t *testing.T) {
	s := newSecurityModel()
	reactive := krt.NewCollection(s.g, s.m.Workloads, func(ctx krt.HandlerContext, w Workload) *WorkloadSecurity {
		sec := s.m.applying.security(ctx, w)
		return &sec
	})
	populate(s.in, "ns", 6, 2)
	check := func(what string) {
		t.Helper()
		for _, want := range reactive.List() {
			got, ok := s.m.WorkloadSecurity(want.ResourceName())
			if !ok || !got.Equals(want) {
				t.Errorf("%s: WorkloadSecurity(%s) = %+v, %v; want %+v", what, want.ResourceName(), got, ok, want)
			}
		}
	}
	check("no policy")
	changes := []struct {
		what  string
		apply func()
	}{
		{"selector deny", func() {
			s.in.Set(authzPolicy("ns", "deny", "svc-3", securityv1beta1.AuthorizationPolicy_DENY, fromPrincipals("cluster.local/ns/x/sa/y")))
		}},
		{"namespace allow", func() {
			s.in.Set(authzPolicy("ns", "allow-all", "", securityv1beta1.AuthorizationPolicy_ALLOW, &securityv1beta1.Rule{}))
		}},
		{"selector strict", func() {
			s.in.Set(peerAuthn("ns", "strict", "svc-4", securityv1beta1.PeerAuthentication_MutualTLS_STRICT))
		}},
		{"mesh-wide deny", func() {
			s.in.Set(authzPolicy("istio-system", "deny-z", "", securityv1beta1.AuthorizationPolicy_DENY, fromPrincipals("cluster.local/ns/x/sa/z")))
		}},
	}
	for _, c := range changes {
		c.apply()
		check(c.what)
	}
	if sec, ok := s.m.WorkloadSecurity("ns/svc-4-0"); !ok || sec.MTLS.Mode != MTLSStrict || len(sec.RBAC.Policies) != 2 {
		t.Errorf("svc-4-0: %+v, %v; want STRICT under two authorization policies", sec, ok)
	}
	if _, ok := s.m.WorkloadSecurity("ns/nobody"); ok {
		t.Error("a workload that does not exist has a security")
	}
}
