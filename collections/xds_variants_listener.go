package collections

import (
	"bytes"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	rbacfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"

	"github.com/meshd/meshd/krt"
)

// The server listeners of VariantGRPCLegacy. gRPC C-core 1.51 rejects a
// HeaderMatcher's string_match in an RBAC filter of a server listener as
// it does in a route, so the legacy form of a listener whose RBAC
// matches a header (an AuthorizationPolicy's methods, or a
// request.headers condition) says the same with the older fields
// (legacyHeaderMatcher). Envoy and grpc-go still read the older fields,
// but every other client gets the base form, unchanged.

// Type URLs of the configurations that embed the RBAC rules: a server
// listener's filter chain holds the HCM in a filter's typed_config, and
// the HCM each RBAC filter in an HTTP filter's.
var (
	hcmTypeURL  = typeURLOf(&hcmv3.HttpConnectionManager{})
	rbacTypeURL = typeURLOf(&rbacfilterv3.RBAC{})
)

// newLegacyServerListeners derives, from the server listeners, the
// VariantGRPCLegacy form of those that need one; the others are the same
// for every client. A listener without an RBAC filter is spared decoding.
func newLegacyServerListeners(g *krt.Graph, listeners krt.Collection[Resource[*listenerv3.Listener]]) krt.Collection[Resource[*listenerv3.Listener]] {
	return krt.NewCollection(g, listeners, func(_ krt.HandlerContext, r Resource[*listenerv3.Listener]) *Resource[*listenerv3.Listener] {
		legacy, changed := legacyServerListener(r)
		if !changed {
			return nil
		}
		return &legacy
	}, krt.WithName("LegacyServerListeners"))
}

// legacyServerListener returns r with its RBAC header matchers in the
// older fields, and whether that differs from r; r's bytes are not
// changed. Name, visibility and NamedOnly stay r's.
func legacyServerListener(r Resource[*listenerv3.Listener]) (Resource[*listenerv3.Listener], bool) {
	// Every RBAC filter names its type URL in the bytes: without it there
	// is nothing to rewrite, the common case, checked without decoding.
	if !bytes.Contains(r.Packed.GetValue(), []byte(rbacTypeURL)) {
		return r, false
	}
	l := r.Message()
	changed := false
	for _, c := range l.GetFilterChains() {
		changed = legacyFilterChain(c) || changed
	}
	if c := l.GetDefaultFilterChain(); c != nil {
		changed = legacyFilterChain(c) || changed
	}
	if !changed {
		return r, false
	}
	r.Packed = mustAny(l)
	return r, true
}

// legacyFilterChain rewrites the RBAC filters of the HCMs of chain c,
// repacking only the HCMs that changed, and reports whether any did.
func legacyFilterChain(c *listenerv3.FilterChain) bool {
	changed := false
	for _, f := range c.GetFilters() {
		a := f.GetTypedConfig()
		if a.GetTypeUrl() != hcmTypeURL {
			continue
		}
		var hcm hcmv3.HttpConnectionManager
		if a.UnmarshalTo(&hcm) != nil || !legacyHTTPFilters(&hcm) {
			continue
		}
		f.ConfigType = &listenerv3.Filter_TypedConfig{TypedConfig: mustAny(&hcm)}
		changed = true
	}
	return changed
}

// legacyHTTPFilters rewrites hcm's RBAC filters, repacking those that
// changed, and reports whether any did.
func legacyHTTPFilters(hcm *hcmv3.HttpConnectionManager) bool {
	changed := false
	for _, hf := range hcm.GetHttpFilters() {
		a := hf.GetTypedConfig()
		if a.GetTypeUrl() != rbacTypeURL {
			continue
		}
		var rbac rbacfilterv3.RBAC
		if a.UnmarshalTo(&rbac) != nil {
			continue
		}
		rules := legacyRBACRules(rbac.GetRules())
		shadow := legacyRBACRules(rbac.GetShadowRules())
		if !rules && !shadow {
			continue
		}
		hf.ConfigType = &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(&rbac)}
		changed = true
	}
	return changed
}

// legacyRBACRules rewrites the header matchers of rules' policies and
// reports whether it changed any.
func legacyRBACRules(rules *rbacv3.RBAC) bool {
	changed := false
	for _, p := range rules.GetPolicies() {
		changed = legacyPermissions(p.GetPermissions()) || changed
		changed = legacyPrincipals(p.GetPrincipals()) || changed
	}
	return changed
}

// legacyPermissions rewrites the header matchers in ps, however deeply
// nested, and reports whether it changed any.
func legacyPermissions(ps []*rbacv3.Permission) bool {
	changed := false
	for _, p := range ps {
		switch r := p.GetRule().(type) {
		case *rbacv3.Permission_Header:
			changed = legacyHeaderMatcher(r.Header) || changed
		case *rbacv3.Permission_AndRules:
			changed = legacyPermissions(r.AndRules.GetRules()) || changed
		case *rbacv3.Permission_OrRules:
			changed = legacyPermissions(r.OrRules.GetRules()) || changed
		case *rbacv3.Permission_NotRule:
			changed = legacyPermissions([]*rbacv3.Permission{r.NotRule}) || changed
		}
	}
	return changed
}

// legacyPrincipals is legacyPermissions for principals.
func legacyPrincipals(ps []*rbacv3.Principal) bool {
	changed := false
	for _, p := range ps {
		switch id := p.GetIdentifier().(type) {
		case *rbacv3.Principal_Header:
			changed = legacyHeaderMatcher(id.Header) || changed
		case *rbacv3.Principal_AndIds:
			changed = legacyPrincipals(id.AndIds.GetIds()) || changed
		case *rbacv3.Principal_OrIds:
			changed = legacyPrincipals(id.OrIds.GetIds()) || changed
		case *rbacv3.Principal_NotId:
			changed = legacyPrincipals([]*rbacv3.Principal{id.NotId}) || changed
		}
	}
	return changed
}
