package collections

import (
	"slices"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources/meshconfig"
)

// WorkloadSecurity is what the mesh config and the security policies make
// of one workload: its identity, the mutual TLS mode of its ports and the
// authorization of requests to it. One item per workload, rather than one
// per concern, keeps one store entry and one set of reads per pod: a
// hundred thousand pods would otherwise pay for three.
type WorkloadSecurity struct {
	Name, Namespace string
	// Cluster is the workload's remote cluster, "" for the local one.
	Cluster        string
	ServiceAccount string
	// SPIFFEID is the identity of the service account,
	// spiffe://<trust domain>/ns/<namespace>/sa/<account>; "" when the
	// trust domain or a segment is not valid in a SPIFFE ID.
	SPIFFEID string
	MTLS     WorkloadMTLS
	RBAC     WorkloadRBAC
}

// ResourceName returns the workload's key, as Workload.ResourceName.
func (w WorkloadSecurity) ResourceName() string {
	return Workload{Name: w.Name, Namespace: w.Namespace, Cluster: w.Cluster}.ResourceName()
}

// Equals reports whether w and o are the same.
func (w WorkloadSecurity) Equals(o WorkloadSecurity) bool {
	return w.Name == o.Name && w.Namespace == o.Namespace && w.Cluster == o.Cluster &&
		w.ServiceAccount == o.ServiceAccount && w.SPIFFEID == o.SPIFFEID &&
		w.MTLS.Equals(o.MTLS) && w.RBAC.Equals(o.RBAC)
}

// WorkloadRBAC is the authorization of requests to a workload: the rules
// of the AuthorizationPolicies that apply to it.
type WorkloadRBAC struct {
	// Deny holds the rules of DENY (and CUSTOM) policies: a request
	// matching one is refused.
	Deny []AuthzRule
	// Allow holds the rules of ALLOW policies. When HasAllow, a request
	// not refused must match one of them, even when there are none.
	Allow    []AuthzRule
	HasAllow bool
	// Policies are the keys of the policies applied, for explanation.
	Policies []string
}

// Equals reports whether w and o are the same.
func (w WorkloadRBAC) Equals(o WorkloadRBAC) bool {
	return w.HasAllow == o.HasAllow &&
		slices.EqualFunc(w.Deny, o.Deny, AuthzRule.equal) && slices.EqualFunc(w.Allow, o.Allow, AuthzRule.equal) &&
		slices.Equal(w.Policies, o.Policies)
}

// resolveRBAC gathers the policies applying to a workload: every policy
// applies, whatever its level; an AUDIT policy changes nothing.
func resolveRBAC(levels ...[]AuthzPolicy) WorkloadRBAC {
	var out WorkloadRBAC
	for _, level := range levels {
		for _, p := range level {
			out.Policies = append(out.Policies, p.ResourceName())
			switch p.Action {
			case AuthzAllow:
				out.HasAllow = true
				out.Allow = append(out.Allow, p.Rules...)
			case AuthzDeny:
				out.Deny = append(out.Deny, p.Rules...)
			}
		}
	}
	return out
}

// newWorkloadSecurity derives each workload's security from the trust
// domain and the policies that apply to it, read by scope
// (applyingPolicies.fetch), so that a policy change recomputes only the
// workloads it applies to.
func newWorkloadSecurity(g *krt.Graph, workloads krt.Collection[Workload], mesh krt.Collection[meshconfig.MeshConfig],
	pas krt.Collection[PeerAuthn], aps krt.Collection[AuthzPolicy]) krt.Collection[WorkloadSecurity] {
	applying := newApplyingPolicies(g, mesh, pas, aps)
	return krt.NewCollection(g, workloads, func(ctx krt.HandlerContext, w Workload) *WorkloadSecurity {
		out := &WorkloadSecurity{Name: w.Name, Namespace: w.Namespace, Cluster: w.Cluster, ServiceAccount: w.ServiceAccount}
		meshWide, ns, sel := applying.fetch(ctx, w)
		out.SPIFFEID, _ = SPIFFEID(meshWide.TrustDomain, w.Namespace, w.ServiceAccount)
		peers, authz := securityPolicy.peerAuthn, securityPolicy.authzPolicy
		out.MTLS = resolveMTLS(ofKind(meshWide.Policies, peers), ofKind(ns, peers), ofKind(sel, peers))
		out.RBAC = resolveRBAC(ofKind(meshWide.Policies, authz), ofKind(ns, authz), ofKind(sel, authz))
		return out
	}, krt.WithName("WorkloadSecurity"))
}
