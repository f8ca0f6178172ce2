package collections

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	securityv1beta1 "istio.io/api/security/v1beta1"
)

// translateRule turns one AuthorizationPolicy rule into an RBAC policy:
// its sources (any of from, each the AND of its fields) and the principal
// conditions make the principal; its operations (any of to) and the
// header conditions make the permission. problems names each field meshd
// does not support; the caller decides how the rule then applies.
func translateRule(r *securityv1beta1.Rule, path string) (*rbacv3.Policy, []string) {
	var problems []string
	var froms []*rbacv3.Principal
	for i, f := range r.GetFrom() {
		p, pr := sourcePrincipal(f.GetSource(), fmt.Sprintf("%s.from[%d].source", path, i))
		froms, problems = append(froms, p), append(problems, pr...)
	}
	var tos []*rbacv3.Permission
	for i, t := range r.GetTo() {
		p, pr := operationPermission(t.GetOperation(), fmt.Sprintf("%s.to[%d].operation", path, i))
		tos, problems = append(tos, p), append(problems, pr...)
	}
	principals := []*rbacv3.Principal{orIDs(froms)}
	permissions := []*rbacv3.Permission{orRules(tos)}
	for i, c := range r.GetWhen() {
		prin, perm, err := condition(c)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s.when[%d]: %v", path, i, err))
			continue
		}
		if prin != nil {
			principals = append(principals, prin)
		}
		if perm != nil {
			permissions = append(permissions, perm)
		}
	}
	return &rbacv3.Policy{
		Permissions: []*rbacv3.Permission{andRules(permissions)},
		Principals:  []*rbacv3.Principal{andIDs(principals)},
	}, problems
}

// sourcePrincipal translates a rule's source: the AND of its fields, each
// matching any of its values.
func sourcePrincipal(s *securityv1beta1.Source, path string) (*rbacv3.Principal, []string) {
	var problems []string
	for field, values := range map[string][]string{
		"requestPrincipals": s.GetRequestPrincipals(), "notRequestPrincipals": s.GetNotRequestPrincipals(),
		"ipBlocks": s.GetIpBlocks(), "notIpBlocks": s.GetNotIpBlocks(),
		"remoteIpBlocks": s.GetRemoteIpBlocks(), "notRemoteIpBlocks": s.GetNotRemoteIpBlocks(),
		"serviceAccounts": s.GetServiceAccounts(), "notServiceAccounts": s.GetNotServiceAccounts(),
		"trustDomains": s.GetTrustDomains(), "notTrustDomains": s.GetNotTrustDomains(),
	} {
		if len(values) > 0 {
			problems = append(problems, path+"."+field+": not supported")
		}
	}
	var and []*rbacv3.Principal
	if v := s.GetPrincipals(); len(v) > 0 {
		and = append(and, orIDs(mapTo(v, principalID)))
	}
	if v := s.GetNotPrincipals(); len(v) > 0 {
		and = append(and, notID(orIDs(mapTo(v, principalID))))
	}
	if v := s.GetNamespaces(); len(v) > 0 {
		and = append(and, orIDs(mapTo(v, namespaceID)))
	}
	if v := s.GetNotNamespaces(); len(v) > 0 {
		and = append(and, notID(orIDs(mapTo(v, namespaceID))))
	}
	sortStrings(problems)
	return andIDs(and), problems
}

// operationPermission translates a rule's operation: the AND of its
// fields, each matching any of its values.
func operationPermission(op *securityv1beta1.Operation, path string) (*rbacv3.Permission, []string) {
	var problems []string
	if len(op.GetHosts()) > 0 {
		problems = append(problems, path+".hosts: not supported")
	}
	if len(op.GetNotHosts()) > 0 {
		problems = append(problems, path+".notHosts: not supported")
	}
	var and []*rbacv3.Permission
	add := func(values []string, one func(string) *rbacv3.Permission, negate bool) {
		if len(values) == 0 {
			return
		}
		p := orRules(mapTo(values, one))
		if negate {
			p = &rbacv3.Permission{Rule: &rbacv3.Permission_NotRule{NotRule: p}}
		}
		and = append(and, p)
	}
	add(op.GetPaths(), pathPermission, false)
	add(op.GetNotPaths(), pathPermission, true)
	add(op.GetMethods(), methodPermission, false)
	add(op.GetNotMethods(), methodPermission, true)
	for field, ports := range map[string][]string{"ports": op.GetPorts(), "notPorts": op.GetNotPorts()} {
		for _, port := range ports {
			if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
				problems = append(problems, fmt.Sprintf("%s.%s: %q is not a port number", path, field, port))
			}
		}
	}
	add(op.GetPorts(), portPermission, false)
	add(op.GetNotPorts(), portPermission, true)
	sortStrings(problems)
	return andRules(and), problems
}

// condition translates a when condition on a request header, the source
// principal or the source namespace.
func condition(c *securityv1beta1.Condition) (*rbacv3.Principal, *rbacv3.Permission, error) {
	key := c.GetKey()
	if name, ok := strings.CutPrefix(key, "request.headers["); ok && strings.HasSuffix(name, "]") && len(name) > 1 {
		name = strings.ToLower(strings.TrimSuffix(name, "]"))
		one := func(v string) *rbacv3.Permission { return headerPermission(name, v) }
		var and []*rbacv3.Permission
		if v := c.GetValues(); len(v) > 0 {
			and = append(and, orRules(mapTo(v, one)))
		}
		if v := c.GetNotValues(); len(v) > 0 {
			and = append(and, &rbacv3.Permission{Rule: &rbacv3.Permission_NotRule{NotRule: orRules(mapTo(v, one))}})
		}
		return nil, andRules(and), nil
	}
	var one func(string) *rbacv3.Principal
	switch key {
	case "source.principal":
		one = principalID
	case "source.namespace":
		one = namespaceID
	default:
		return nil, nil, fmt.Errorf("key %q: not supported", key)
	}
	var and []*rbacv3.Principal
	if v := c.GetValues(); len(v) > 0 {
		and = append(and, orIDs(mapTo(v, one)))
	}
	if v := c.GetNotValues(); len(v) > 0 {
		and = append(and, notID(orIDs(mapTo(v, one))))
	}
	return andIDs(and), nil, nil
}

// principalID matches an Istio principal ("<trust domain>/ns/<ns>/sa/<sa>",
// with "*" as a prefix, suffix or whole wildcard) against the peer's
// SPIFFE ID; "*" matches any authenticated peer.
func principalID(p string) *rbacv3.Principal {
	if p == "*" {
		return authenticated(nil)
	}
	return authenticated(wildcardMatch(p, "spiffe://"))
}

// namespaceID matches the namespace of the peer's SPIFFE ID.
func namespaceID(ns string) *rbacv3.Principal {
	if ns == "*" {
		return authenticated(nil)
	}
	pattern := regexp.QuoteMeta(ns)
	switch {
	case strings.HasPrefix(ns, "*"):
		pattern = "[^/]*" + regexp.QuoteMeta(ns[1:])
	case strings.HasSuffix(ns, "*"):
		pattern = regexp.QuoteMeta(ns[:len(ns)-1]) + "[^/]*"
	}
	return authenticated(&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{
		SafeRegex: &matcherv3.RegexMatcher{Regex: "spiffe://[^/]+/ns/" + pattern + "/sa/[^/]+"},
	}})
}

func authenticated(name *matcherv3.StringMatcher) *rbacv3.Principal {
	return &rbacv3.Principal{Identifier: &rbacv3.Principal_Authenticated_{
		Authenticated: &rbacv3.Principal_Authenticated{PrincipalName: name},
	}}
}

// wildcardMatch matches v, where a leading or trailing "*" stands for any
// characters, with prefix put before v's fixed part.
func wildcardMatch(v, prefix string) *matcherv3.StringMatcher {
	switch {
	case strings.HasPrefix(v, "*"):
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Suffix{Suffix: v[1:]}}
	case strings.HasSuffix(v, "*"):
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Prefix{Prefix: prefix + v[:len(v)-1]}}
	}
	return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: prefix + v}}
}

func pathPermission(p string) *rbacv3.Permission {
	if p == "*" {
		return anyPermission()
	}
	return &rbacv3.Permission{Rule: &rbacv3.Permission_UrlPath{
		UrlPath: &matcherv3.PathMatcher{Rule: &matcherv3.PathMatcher_Path{Path: wildcardMatch(p, "")}},
	}}
}

// methodPermission matches the HTTP method; gRPC requests are all POST.
func methodPermission(m string) *rbacv3.Permission {
	if m == "*" {
		return anyPermission()
	}
	return headerPermission(":method", m)
}

func headerPermission(name, v string) *rbacv3.Permission {
	h := &routev3.HeaderMatcher{Name: name}
	if v == "*" {
		h.HeaderMatchSpecifier = &routev3.HeaderMatcher_PresentMatch{PresentMatch: true}
	} else {
		h.HeaderMatchSpecifier = &routev3.HeaderMatcher_StringMatch{StringMatch: wildcardMatch(v, "")}
	}
	return &rbacv3.Permission{Rule: &rbacv3.Permission_Header{Header: h}}
}

// portPermission matches the destination port; a value that is no port
// matches nothing (operationPermission reports it).
func portPermission(p string) *rbacv3.Permission {
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return &rbacv3.Permission{Rule: &rbacv3.Permission_NotRule{NotRule: anyPermission()}}
	}
	return &rbacv3.Permission{Rule: &rbacv3.Permission_DestinationPort{DestinationPort: uint32(n)}}
}
