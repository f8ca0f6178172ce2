package collections

import (
	"slices"

	"github.com/meshd/meshd/krt"
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

// workloadSecurity returns the security of w under what applies to it:
// the mesh's, and the policies of w's namespace, namespace-wide (ns) and
// selecting w (sel), each in key order.
func workloadSecurity(w Workload, meshWide meshSecurity, ns, sel []securityPolicy) WorkloadSecurity {
	out := WorkloadSecurity{Name: w.Name, Namespace: w.Namespace, Cluster: w.Cluster, ServiceAccount: w.ServiceAccount}
	out.SPIFFEID, _ = SPIFFEID(meshWide.TrustDomain, w.Namespace, w.ServiceAccount)
	peers, authz := securityPolicy.peerAuthn, securityPolicy.authzPolicy
	out.MTLS = resolveMTLS(ofKind(meshWide.Policies, peers), ofKind(ns, peers), ofKind(sel, peers))
	out.RBAC = resolveRBAC(ofKind(meshWide.Policies, authz), ofKind(ns, authz), ofKind(sel, authz))
	return out
}

// security derives w's security from the trust domain and the policies
// that apply to it, read by scope (applyingPolicies.fetch), so that a
// policy change recomputes only the computations of the workloads it
// applies to. There is no collection of every workload's security: only
// the server listeners asked for need a whole one, and a hundred
// thousand items with three reads each cost 26 MiB (ClusterSecurity
// reads what it needs per service).
func (a applyingPolicies) security(ctx krt.HandlerContext, w Workload) WorkloadSecurity {
	meshWide, ns, sel := a.fetch(ctx, w)
	return workloadSecurity(w, meshWide, ns, sel)
}

// securityAt is security as of snapshot s, read outside any
// transformation.
func (a applyingPolicies) securityAt(s *krt.Snapshot, w Workload) WorkloadSecurity {
	meshWide, _ := a.mesh.At(s).Get(krt.SingletonKey)
	policies := a.policies.At(s)
	ns := policies.Lookup(a.byScope, namespaceScopeKey(w.Namespace))
	var sel []securityPolicy
	if len(w.Labels) > 0 {
		for _, p := range policies.List() {
			if p.GetNamespace() == w.Namespace && selectorSelects(p.GetSelector(), w.Labels) {
				sel = append(sel, p)
			}
		}
	}
	return workloadSecurity(w, meshWide, ns, sel)
}

// selectorSelects reports whether a policy's selector selects labels, as
// krt.FilterSelects decides: an empty selector selects nothing.
func selectorSelects(selector, labels map[string]string) bool {
	if len(selector) == 0 || len(selector) > len(labels) {
		return false
	}
	for k, v := range selector {
		if lv, ok := labels[k]; !ok || lv != v {
			return false
		}
	}
	return true
}
