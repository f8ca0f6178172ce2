package collections

import (
	"fmt"
	"slices"

	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	"google.golang.org/protobuf/proto"
	securityv1beta1 "istio.io/api/security/v1beta1"
	securityv1 "istio.io/client-go/pkg/apis/security/v1"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources/meshconfig"
)

// AuthzAction is what an AuthorizationPolicy does with the requests its
// rules match.
type AuthzAction string

// Actions meshd enforces. A CUSTOM policy is enforced as a DENY of every
// request it selects (fail-closed); an AUDIT policy has no effect on
// traffic and is reported.
const (
	AuthzAllow AuthzAction = "ALLOW"
	AuthzDeny  AuthzAction = "DENY"
	AuthzAudit AuthzAction = "AUDIT"
)

// AuthzRule is one rule of an AuthorizationPolicy as an Envoy RBAC
// policy. Name is "namespace/name/rules[i]".
type AuthzRule struct {
	Name   string
	Policy *rbacv3.Policy
}

func (r AuthzRule) equal(o AuthzRule) bool {
	return r.Name == o.Name && (r.Policy == o.Policy || proto.Equal(r.Policy, o.Policy))
}

// AuthzPolicy is the mesh's view of an AuthorizationPolicy: its scope,
// action and rules translated to RBAC. Rules that can never match are
// left out, so an ALLOW policy may have none: it then allows nothing, as
// in Istio.
type AuthzPolicy struct {
	PolicyScope
	Action AuthzAction
	Rules  []AuthzRule
	// Problems lists the fields meshd does not support, each with how it
	// was applied instead; empty when all of the policy is applied.
	Problems []string
}

// ResourceName returns "namespace/name".
func (p AuthzPolicy) ResourceName() string { return p.Namespace + "/" + p.Name }

// GetNamespace returns the policy's namespace.
func (p AuthzPolicy) GetNamespace() string { return p.Namespace }

// GetSelector returns the workload selector, so FilterSelects finds the
// policies selecting a workload.
func (p AuthzPolicy) GetSelector() map[string]string { return p.Selector }

// Equals reports whether p and o are the same.
func (p AuthzPolicy) Equals(o AuthzPolicy) bool {
	return p.PolicyScope.equal(o.PolicyScope) && p.Action == o.Action &&
		slices.EqualFunc(p.Rules, o.Rules, AuthzRule.equal) && slices.Equal(p.Problems, o.Problems)
}

// buildAuthzPolicy translates an AuthorizationPolicy. What meshd cannot
// enforce is reported in Problems and applied fail-closed: an ALLOW rule
// with an unsupported field matches nothing, a DENY rule with one matches
// every request, a CUSTOM policy denies everything it selects, and a
// policy attached by targetRefs applies to its whole namespace.
func buildAuthzPolicy(ap *securityv1.AuthorizationPolicy, rootNamespace string) *AuthzPolicy {
	spec := &ap.Spec
	p := &AuthzPolicy{PolicyScope: newPolicyScope(ap, spec.GetSelector(), rootNamespace)}
	if spec.GetTargetRef() != nil || len(spec.GetTargetRefs()) > 0 {
		p.Problems = append(p.Problems, "spec.targetRefs: not supported; the policy applies to every workload of its namespace")
	}
	prefix := p.ResourceName() + "/"
	switch spec.GetAction() {
	case securityv1beta1.AuthorizationPolicy_ALLOW:
		p.Action = AuthzAllow
	case securityv1beta1.AuthorizationPolicy_DENY:
		p.Action = AuthzDeny
	case securityv1beta1.AuthorizationPolicy_AUDIT:
		p.Action = AuthzAudit
		p.Problems = append(p.Problems, "spec.action AUDIT: not supported; it has no effect on traffic")
		return p
	default:
		p.Action = AuthzDeny
		p.Problems = append(p.Problems, fmt.Sprintf("spec.action %s: not supported; the policy denies every request it selects", spec.GetAction()))
		p.Rules = []AuthzRule{{Name: prefix + "custom", Policy: matchAll()}}
		return p
	}
	for i, r := range spec.GetRules() {
		path := fmt.Sprintf("spec.rules[%d]", i)
		pol, problems := translateRule(r, path)
		for _, pr := range problems {
			if p.Action == AuthzAllow {
				pr += "; the rule matches nothing"
			} else {
				pr += "; the rule matches every request"
			}
			p.Problems = append(p.Problems, pr)
		}
		switch {
		case len(problems) == 0:
			p.Rules = append(p.Rules, AuthzRule{Name: fmt.Sprintf("%srules[%d]", prefix, i), Policy: pol})
		case p.Action == AuthzDeny:
			p.Rules = append(p.Rules, AuthzRule{Name: fmt.Sprintf("%srules[%d]", prefix, i), Policy: matchAll()})
		}
	}
	return p
}

// matchAll is a policy matching every request.
func matchAll() *rbacv3.Policy {
	return &rbacv3.Policy{
		Permissions: []*rbacv3.Permission{anyPermission()},
		Principals:  []*rbacv3.Principal{anyPrincipal()},
	}
}

func newAuthzPolicies(g *krt.Graph, in krt.Collection[*securityv1.AuthorizationPolicy], mesh krt.Collection[meshconfig.MeshConfig]) krt.Collection[AuthzPolicy] {
	return krt.NewCollection(g, in, func(ctx krt.HandlerContext, ap *securityv1.AuthorizationPolicy) *AuthzPolicy {
		return buildAuthzPolicy(ap, fetchMesh(ctx, mesh).RootNamespace)
	}, krt.WithName("AuthorizationPolicies"))
}
