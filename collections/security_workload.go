package collections

import (
	"slices"

	"github.com/meshd/meshd/krt"
)

// WorkloadRBAC is the authorization of requests to a workload: the rules
// of the AuthorizationPolicies that apply to it.
type WorkloadRBAC struct {
	Name, Namespace string
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

// ResourceName returns the workload's "namespace/name".
func (w WorkloadRBAC) ResourceName() string { return w.Namespace + "/" + w.Name }

// Equals reports whether w and o are the same.
func (w WorkloadRBAC) Equals(o WorkloadRBAC) bool {
	return w.Name == o.Name && w.Namespace == o.Namespace && w.HasAllow == o.HasAllow &&
		slices.EqualFunc(w.Deny, o.Deny, AuthzRule.equal) && slices.EqualFunc(w.Allow, o.Allow, AuthzRule.equal) &&
		slices.Equal(w.Policies, o.Policies)
}

// resolveRBAC gathers the policies applying to a workload: every policy
// applies, whatever its level; an AUDIT policy changes nothing.
func resolveRBAC(w Workload, levels ...[]AuthzPolicy) WorkloadRBAC {
	out := WorkloadRBAC{Name: w.Name, Namespace: w.Namespace}
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

func newWorkloadRBAC(g *krt.Graph, workloads krt.Collection[Workload], aps krt.Collection[AuthzPolicy]) krt.Collection[WorkloadRBAC] {
	return newPerWorkload(g, workloads, aps, AuthzPolicy.scopeKeys, "WorkloadRBAC", func(w Workload, mesh, ns, sel []AuthzPolicy) WorkloadRBAC {
		return resolveRBAC(w, mesh, ns, sel)
	})
}
