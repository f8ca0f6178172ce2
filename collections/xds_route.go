package collections

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// flavor selects the dialect of generated routes: gRPC proxyless clients
// understand a subset of Envoy's route API.
type flavor int

const (
	flavorGRPC flavor = iota
	flavorEnvoy
)

// buildVirtualHost returns the virtual host of a service port: the entries
// in order, then the default route to the port's own cluster.
func buildVirtualHost(p PortRoutes, domains []string, f flavor) *routev3.VirtualHost {
	vh := &routev3.VirtualHost{
		Name:    p.ListenerName(),
		Domains: domains,
	}
	for _, e := range p.Entries {
		if f == flavorGRPC && e.Match.Method != "" && e.Match.Method != "POST" {
			// Every gRPC call is a POST: such a match never holds.
			continue
		}
		vh.Routes = append(vh.Routes, buildRoute(e, f))
	}
	vh.Routes = append(vh.Routes, &routev3.Route{
		Name:  "default",
		Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
		Action: &routev3.Route_Route{Route: &routev3.RouteAction{
			ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: p.Cluster},
		}},
	})
	return vh
}

func buildRoute(e RouteEntry, f flavor) *routev3.Route {
	r := &routev3.Route{Name: e.Name, Match: buildRouteMatch(e.Match, f)}
	rule := e.Rule
	backends, resolved := weightedClusters(rule.Backends, f)
	if !resolved {
		// Gateway API: a rule with no usable backend answers 500. gRPC
		// clients fail RPCs that match a route with an unsupported action.
		r.Action = &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{Status: 500}}
		return r
	}
	action := &routev3.RouteAction{}
	if len(backends) == 1 {
		action.ClusterSpecifier = &routev3.RouteAction_Cluster{Cluster: backends[0].Name}
	} else {
		action.ClusterSpecifier = &routev3.RouteAction_WeightedClusters{WeightedClusters: &routev3.WeightedCluster{Clusters: backends}}
	}
	if backends[len(backends)-1].Name == envoyInvalidBackendCluster {
		// The share of unresolved backends goes to a cluster Envoy does
		// not know (invalidBackendCluster): answer it 500, not 503.
		action.ClusterNotFoundResponseCode = routev3.RouteAction_INTERNAL_SERVER_ERROR
	}
	if rule.Timeout != nil {
		if f == flavorGRPC {
			action.MaxStreamDuration = &routev3.RouteAction_MaxStreamDuration{MaxStreamDuration: durationpb.New(*rule.Timeout)}
		} else {
			action.Timeout = durationpb.New(*rule.Timeout)
		}
	}
	action.RetryPolicy = buildRetry(rule, f)
	r.Action = &routev3.Route_Route{Route: action}
	if f == flavorEnvoy {
		// gRPC clients ignore header rewriting; only Envoy gets it.
		if m := rule.RequestHeaders; m != nil {
			r.RequestHeadersToAdd = headerOptions(m)
			r.RequestHeadersToRemove = slices.Clone(m.Remove)
		}
		if m := rule.ResponseHeaders; m != nil {
			r.ResponseHeadersToAdd = headerOptions(m)
			r.ResponseHeadersToRemove = slices.Clone(m.Remove)
		}
	}
	return r
}

// weightedClusters returns the weighted clusters of backends and whether
// any resolved backend has a positive weight. gRPC clients skip zero
// weights but reject a weighted action whose weights sum to zero, so zero
// weights are left out for both dialects. The unresolved backends share
// one entry, the invalid backend cluster of the dialect, with the sum of
// their weights: gRPC clients keep one weight per cluster name.
func weightedClusters(backends []WeightedBackend, f flavor) ([]*routev3.WeightedCluster_ClusterWeight, bool) {
	var out []*routev3.WeightedCluster_ClusterWeight
	var unresolved uint32
	for _, b := range backends {
		switch {
		case b.Weight == 0:
		case b.Unresolved != "":
			unresolved += b.Weight
		default:
			out = append(out, &routev3.WeightedCluster_ClusterWeight{Name: b.Cluster, Weight: wrapperspb.UInt32(b.Weight)})
		}
	}
	if len(out) == 0 {
		return nil, false
	}
	if unresolved > 0 {
		out = append(out, &routev3.WeightedCluster_ClusterWeight{Name: invalidBackendCluster(f), Weight: wrapperspb.UInt32(unresolved)})
	}
	return out, true
}

func headerOptions(m *HeaderModifier) []*corev3.HeaderValueOption {
	var out []*corev3.HeaderValueOption
	for _, h := range m.Set {
		out = append(out, &corev3.HeaderValueOption{
			Header:       &corev3.HeaderValue{Key: h.Name, Value: h.Value},
			AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
		})
	}
	for _, h := range m.Add {
		out = append(out, &corev3.HeaderValueOption{
			Header:       &corev3.HeaderValue{Key: h.Name, Value: h.Value},
			AppendAction: corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD,
		})
	}
	return out
}

// grpcRetryOn maps HTTP status codes to the gRPC status codes a gRPC
// client retries on, following the gRPC/HTTP status mapping; gRPC clients
// understand only gRPC codes in retry_on.
var grpcRetryOn = map[int32]string{
	429: "resource-exhausted",
	500: "internal",
	502: "unavailable",
	503: "unavailable",
	504: "deadline-exceeded",
}

func buildRetry(rule RouteRule, f flavor) *routev3.RetryPolicy {
	rt := rule.Retry
	if rt == nil {
		if rule.BackendTimeout != nil && f == flavorEnvoy {
			return &routev3.RetryPolicy{NumRetries: wrapperspb.UInt32(0), PerTryTimeout: durationpb.New(*rule.BackendTimeout)}
		}
		return nil
	}
	p := &routev3.RetryPolicy{}
	if rt.Attempts > 0 {
		p.NumRetries = wrapperspb.UInt32(uint32(rt.Attempts))
	}
	if rt.Backoff > 0 {
		p.RetryBackOff = &routev3.RetryPolicy_RetryBackOff{BaseInterval: durationpb.New(rt.Backoff)}
	}
	if f == flavorGRPC {
		var on []string
		for _, c := range rt.Codes {
			if s, ok := grpcRetryOn[c]; ok && !slices.Contains(on, s) {
				on = append(on, s)
			}
		}
		if len(on) == 0 {
			on = []string{"unavailable"}
		}
		p.RetryOn = strings.Join(on, ",")
		return p
	}
	on := []string{"connect-failure", "refused-stream"}
	if len(rt.Codes) > 0 {
		on = append(on, "retriable-status-codes")
		for _, c := range rt.Codes {
			p.RetriableStatusCodes = append(p.RetriableStatusCodes, uint32(c))
		}
	}
	p.RetryOn = strings.Join(on, ",")
	if rule.BackendTimeout != nil {
		p.PerTryTimeout = durationpb.New(*rule.BackendTimeout)
	}
	return p
}

func buildRouteMatch(m RouteMatch, f flavor) *routev3.RouteMatch {
	rm := &routev3.RouteMatch{}
	switch m.PathKind {
	case PathExact:
		rm.PathSpecifier = &routev3.RouteMatch_Path{Path: m.Path}
	case PathRegex:
		rm.PathSpecifier = &routev3.RouteMatch_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: m.Path}}
	case PathStringPrefix:
		rm.PathSpecifier = &routev3.RouteMatch_Prefix{Prefix: m.Path}
	default:
		p := strings.TrimRight(m.Path, "/")
		switch {
		case p == "":
			rm.PathSpecifier = &routev3.RouteMatch_Prefix{Prefix: "/"}
		case f == flavorEnvoy:
			rm.PathSpecifier = &routev3.RouteMatch_PathSeparatedPrefix{PathSeparatedPrefix: p}
		default:
			// gRPC clients know prefix, path and safe_regex only; a
			// segment-wise prefix is the path itself or anything below it.
			rm.PathSpecifier = &routev3.RouteMatch_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{
				Regex: regexp.QuoteMeta(p) + "(/.*)?",
			}}
		}
	}
	for _, h := range m.Headers {
		rm.Headers = append(rm.Headers, headerMatcher(strings.ToLower(h.Name), h))
	}
	// gRPC clients do not expose :method to route matching, and every gRPC
	// call is a POST, so a POST match is left out for them.
	if m.Method != "" && f == flavorEnvoy {
		rm.Headers = append(rm.Headers, headerMatcher(":method", HeaderMatch{Value: m.Method}))
	}
	for _, q := range m.QueryParams {
		rm.QueryParameters = append(rm.QueryParameters, &routev3.QueryParameterMatcher{
			Name:                         q.Name,
			QueryParameterMatchSpecifier: &routev3.QueryParameterMatcher_StringMatch{StringMatch: stringMatcher(q)},
		})
	}
	return rm
}

func headerMatcher(name string, h HeaderMatch) *routev3.HeaderMatcher {
	return &routev3.HeaderMatcher{
		Name:                 name,
		HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: stringMatcher(h)},
	}
}

func stringMatcher(h HeaderMatch) *matcherv3.StringMatcher {
	if h.Regex {
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: h.Value}}}
	}
	return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: h.Value}}
}

// grpcDomains are the names a gRPC client may dial a port by.
func grpcDomains(p PortRoutes) []string {
	return []string{p.ListenerName(), p.Hostname}
}

// sidecarDomains are the host headers under which a sidecar sees traffic
// to a port: the FQDN and the namespace-qualified short names, with and
// without the port, and the cluster IP with the port. Bare names
// ("name") are left out: they resolve per client namespace, and a route
// configuration shared by every client cannot tell them apart.
func sidecarDomains(p PortRoutes) []string {
	port := ":" + strconv.Itoa(int(p.Port))
	names := []string{p.Hostname, p.Name + "." + p.Namespace, p.Name + "." + p.Namespace + ".svc"}
	var out []string
	for _, n := range names {
		out = append(out, n, n+port)
	}
	if p.ClusterIP != "" {
		out = append(out, p.ClusterIP, p.ClusterIP+port)
	}
	return out
}

// buildGRPCRouteConfig returns the route configuration of a service port
// for gRPC clients, named like its listener.
func buildGRPCRouteConfig(p PortRoutes) *routev3.RouteConfiguration {
	return &routev3.RouteConfiguration{
		Name:         p.ListenerName(),
		VirtualHosts: []*routev3.VirtualHost{buildVirtualHost(p, grpcDomains(p), flavorGRPC)},
	}
}

// buildSidecarRouteConfig returns the route configuration of sidecar
// proxies for a port ("<port>", or a namespace's view of it): one virtual
// host per HTTP service given.
func buildSidecarRouteConfig(name string, ports []PortRoutes) *routev3.RouteConfiguration {
	rc := &routev3.RouteConfiguration{Name: name, ValidateClusters: wrapperspb.Bool(false)}
	// Envoy rejects a route configuration that lists a domain twice. Real
	// cluster IPs are unique, but hand-written manifests may repeat one:
	// the first service (by key) keeps it.
	seen := map[string]bool{}
	for _, p := range ports {
		var domains []string
		for _, d := range sidecarDomains(p) {
			if !seen[d] {
				seen[d] = true
				domains = append(domains, d)
			}
		}
		rc.VirtualHosts = append(rc.VirtualHosts, buildVirtualHost(p, domains, flavorEnvoy))
	}
	return rc
}
