package collections

import (
	"slices"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources/meshconfig"
)

// securityPolicy is a PeerAuthentication or an AuthorizationPolicy: both
// kinds in one collection, so that a workload reads the policies of each
// scope with one read rather than one per kind. Exactly one of the two is
// set; both are read-only.
type securityPolicy struct {
	peer  *PeerAuthn
	authz *AuthzPolicy
}

func (p securityPolicy) scope() *PolicyScope {
	if p.peer != nil {
		return &p.peer.PolicyScope
	}
	return &p.authz.PolicyScope
}

// ResourceName returns the kind and the policy's "namespace/name".
func (p securityPolicy) ResourceName() string {
	if p.peer != nil {
		return "PeerAuthentication/" + p.peer.ResourceName()
	}
	return "AuthorizationPolicy/" + p.authz.ResourceName()
}

// GetNamespace returns the policy's namespace.
func (p securityPolicy) GetNamespace() string { return p.scope().Namespace }

// GetSelector returns the workload selector, so FilterSelects finds the
// policies selecting a workload.
func (p securityPolicy) GetSelector() map[string]string { return p.scope().Selector }

// Equals reports whether p and o are the same policy of the same kind.
func (p securityPolicy) Equals(o securityPolicy) bool {
	if (p.peer == nil) != (o.peer == nil) {
		return false
	}
	if p.peer != nil {
		return p.peer.Equals(*o.peer)
	}
	return p.authz.Equals(*o.authz)
}

// ofKind returns the policies of one kind, in order: those for which
// kind, securityPolicy.peerAuthn or securityPolicy.authzPolicy, is set.
func ofKind[P any](policies []securityPolicy, kind func(securityPolicy) *P) []P {
	var out []P
	for _, p := range policies {
		if v := kind(p); v != nil {
			out = append(out, *v)
		}
	}
	return out
}

func (p securityPolicy) peerAuthn() *PeerAuthn     { return p.peer }
func (p securityPolicy) authzPolicy() *AuthzPolicy { return p.authz }

// meshSecurity is what applies to every workload: the trust domain and
// the mesh-wide policies. Workloads read it as one item, rather than
// the mesh config and the mesh-wide policies apart.
type meshSecurity struct {
	TrustDomain string
	Policies    []securityPolicy
}

// Equals reports whether m and o are the same.
func (m meshSecurity) Equals(o meshSecurity) bool {
	return m.TrustDomain == o.TrustDomain && slices.EqualFunc(m.Policies, o.Policies, securityPolicy.Equals)
}

// applyingPolicies reads the policies that apply to a workload.
type applyingPolicies struct {
	mesh     krt.Singleton[meshSecurity]
	policies krt.Collection[securityPolicy]
	byScope  krt.Index[securityPolicy]
	// peers and peersByScope are the PeerAuthentications alone, which
	// is all that the clients of a workload depend on.
	peers        krt.Collection[securityPolicy]
	peersByScope krt.Index[securityPolicy]
}

// newApplyingPolicies gathers both kinds of policies, indexed by their
// scopeKeys, and what applies mesh-wide.
func newApplyingPolicies(g *krt.Graph, mesh krt.Collection[meshconfig.MeshConfig], pas krt.Collection[PeerAuthn],
	aps krt.Collection[AuthzPolicy]) applyingPolicies {
	peers := krt.NewCollection(g, pas, func(_ krt.HandlerContext, p PeerAuthn) *securityPolicy {
		return &securityPolicy{peer: &p}
	}, krt.WithName("PeerAuthenticationScopes"))
	policies := krt.Join(g, []krt.Collection[securityPolicy]{
		peers,
		krt.NewCollection(g, aps, func(_ krt.HandlerContext, p AuthzPolicy) *securityPolicy {
			return &securityPolicy{authz: &p}
		}, krt.WithName("AuthorizationPolicyScopes")),
	}, krt.WithName("SecurityPolicies"))
	scopeKeys := func(p securityPolicy) []string { return p.scope().scopeKeys() }
	byScope := krt.NewIndex(policies, "by-scope", scopeKeys)
	meshWide := krt.NewSingleton(g, func(ctx krt.HandlerContext) *meshSecurity {
		return &meshSecurity{
			TrustDomain: fetchMesh(ctx, mesh).TrustDomain,
			Policies:    krt.Fetch(ctx, policies, krt.FilterIndex(byScope, meshScopeKey)),
		}
	}, krt.WithName("MeshSecurity"))
	return applyingPolicies{mesh: meshWide, policies: policies, byScope: byScope,
		peers: peers, peersByScope: krt.NewIndex(peers, "by-scope", scopeKeys)}
}

// fetch returns what applies to workload w: the mesh's, and the policies
// of w's namespace, in two groups: namespace-wide, and selecting w by
// labels. Each read is narrow, so a policy change recomputes only the
// workloads it applies to (before or after the change).
func (a applyingPolicies) fetch(ctx krt.HandlerContext, w Workload) (mesh meshSecurity, ns, sel []securityPolicy) {
	mesh, _ = krt.FetchOne(ctx, a.mesh)
	ns = krt.Fetch(ctx, a.policies, krt.FilterIndex(a.byScope, namespaceScopeKey(w.Namespace)))
	if len(w.Labels) > 0 {
		sel = krt.Fetch(ctx, a.policies, krt.FilterNamespace(w.Namespace), krt.FilterSelects(w.Labels))
	}
	return mesh, ns, sel
}

// peersOnly returns m with its PeerAuthentications only.
func (m meshSecurity) peersOnly() meshSecurity {
	out := meshSecurity{TrustDomain: m.TrustDomain}
	for _, p := range m.Policies {
		if p.peer != nil {
			out.Policies = append(out.Policies, p)
		}
	}
	return out
}

// fetchMeshPeers returns the trust domain and the mesh-wide
// PeerAuthentications; a mesh-wide AuthorizationPolicy does not
// recompute the caller.
func (a applyingPolicies) fetchMeshPeers(ctx krt.HandlerContext) meshSecurity {
	if ms := krt.PartialFetch(ctx, a.mesh, meshSecurity.peersOnly); len(ms) > 0 {
		return ms[0]
	}
	return meshSecurity{}
}

// fetchNamespacePeers returns the PeerAuthentications of namespace ns
// without a selector. Only PeerAuthentications are read, so that no
// AuthorizationPolicy recomputes the caller.
func (a applyingPolicies) fetchNamespacePeers(ctx krt.HandlerContext, ns string) []securityPolicy {
	return krt.Fetch(ctx, a.peers, krt.FilterIndex(a.peersByScope, namespaceScopeKey(ns)))
}

// fetchSelectingPeers returns the PeerAuthentications of namespace ns
// that select labels, reading no AuthorizationPolicy either.
func (a applyingPolicies) fetchSelectingPeers(ctx krt.HandlerContext, ns string, labels map[string]string) []securityPolicy {
	if len(labels) == 0 {
		return nil
	}
	return krt.Fetch(ctx, a.peers, krt.FilterNamespace(ns), krt.FilterSelects(labels))
}
