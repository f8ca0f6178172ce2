package collections

import (
	"slices"

	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
)

func anyPermission() *rbacv3.Permission {
	return &rbacv3.Permission{Rule: &rbacv3.Permission_Any{Any: true}}
}

func anyPrincipal() *rbacv3.Principal {
	return &rbacv3.Principal{Identifier: &rbacv3.Principal_Any{Any: true}}
}

// orRules matches any of ps; none is no constraint.
func orRules(ps []*rbacv3.Permission) *rbacv3.Permission {
	switch len(ps) {
	case 0:
		return anyPermission()
	case 1:
		return ps[0]
	}
	return &rbacv3.Permission{Rule: &rbacv3.Permission_OrRules{OrRules: &rbacv3.Permission_Set{Rules: ps}}}
}

// andRules matches all of ps; none is no constraint.
func andRules(ps []*rbacv3.Permission) *rbacv3.Permission {
	switch len(ps) {
	case 0:
		return anyPermission()
	case 1:
		return ps[0]
	}
	return &rbacv3.Permission{Rule: &rbacv3.Permission_AndRules{AndRules: &rbacv3.Permission_Set{Rules: ps}}}
}

// orIDs matches any of ps; none is no constraint.
func orIDs(ps []*rbacv3.Principal) *rbacv3.Principal {
	switch len(ps) {
	case 0:
		return anyPrincipal()
	case 1:
		return ps[0]
	}
	return &rbacv3.Principal{Identifier: &rbacv3.Principal_OrIds{OrIds: &rbacv3.Principal_Set{Ids: ps}}}
}

// andIDs matches all of ps; none is no constraint.
func andIDs(ps []*rbacv3.Principal) *rbacv3.Principal {
	switch len(ps) {
	case 0:
		return anyPrincipal()
	case 1:
		return ps[0]
	}
	return &rbacv3.Principal{Identifier: &rbacv3.Principal_AndIds{AndIds: &rbacv3.Principal_Set{Ids: ps}}}
}

func notID(p *rbacv3.Principal) *rbacv3.Principal {
	return &rbacv3.Principal{Identifier: &rbacv3.Principal_NotId{NotId: p}}
}

func mapTo[T any](in []string, f func(string) T) []T {
	out := make([]T, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

func sortStrings(s []string) { slices.Sort(s) }
