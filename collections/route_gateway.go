package collections

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshd/meshd/krt"
)

// Route kinds.
const (
	KindHTTPRoute = "HTTPRoute"
	KindGRPCRoute = "GRPCRoute"
)

// routeResult is what compiling one route object yields: its status and
// the bindings of the parents it is in effect for.
type routeResult struct {
	Key      string
	Status   RouteStatus
	Bindings []RouteBinding
}

func (r routeResult) ResourceName() string { return r.Key }

func newHTTPRouteResults(g *krt.Graph, routes krt.Collection[*gatewayv1.HTTPRoute], services krt.Collection[ServiceInfo]) krt.Collection[routeResult] {
	return krt.NewCollection(g, routes, func(ctx krt.HandlerContext, r *gatewayv1.HTTPRoute) *routeResult {
		if !HasServiceParent(r.Spec.ParentRefs) {
			return nil
		}
		rules, err := convertRules(r.Spec.Rules, convertHTTPRule)
		return compileRoute(ctx, services, KindHTTPRoute, r.ObjectMeta, r.Spec.ParentRefs, rules, err)
	}, krt.WithName("HTTPRouteResults"))
}

func newGRPCRouteResults(g *krt.Graph, routes krt.Collection[*gatewayv1.GRPCRoute], services krt.Collection[ServiceInfo]) krt.Collection[routeResult] {
	return krt.NewCollection(g, routes, func(ctx krt.HandlerContext, r *gatewayv1.GRPCRoute) *routeResult {
		if !HasServiceParent(r.Spec.ParentRefs) {
			return nil
		}
		rules, err := convertRules(r.Spec.Rules, convertGRPCRule)
		return compileRoute(ctx, services, KindGRPCRoute, r.ObjectMeta, r.Spec.ParentRefs, rules, err)
	}, krt.WithName("GRPCRouteResults"))
}

// pendingRule is a converted rule whose backends are not resolved yet.
type pendingRule struct {
	rule     RouteRule
	backends []gatewayv1.BackendRef
}

// isServiceRef reports whether a reference of the given group and kind
// names a core Service. An unset group is accepted with kind Service, as
// the mesh has no other Service kind.
func isServiceRef(group *gatewayv1.Group, kind *gatewayv1.Kind, defaultKind string) bool {
	g := ""
	if group != nil {
		g = string(*group)
	}
	k := defaultKind
	if kind != nil {
		k = string(*kind)
	}
	return (g == "" || g == "core") && k == "Service"
}

// HasServiceParent reports whether refs name a core Service (group "" or
// "core", kind Service; an absent kind means Gateway): whether the mesh
// model reads the route at all.
func HasServiceParent(refs []gatewayv1.ParentReference) bool {
	for _, p := range refs {
		if isServiceRef(p.Group, p.Kind, "Gateway") {
			return true
		}
	}
	return false
}

// compileRoute resolves a route's parents and backends into its status and
// the bindings of the parents it is in effect for.
func compileRoute(ctx krt.HandlerContext, services krt.Collection[ServiceInfo], kind string, meta metav1.ObjectMeta,
	parents []gatewayv1.ParentReference, rules []pendingRule, convErr error) *routeResult {
	res := &routeResult{
		Key:    RouteKey(kind, meta.Namespace, meta.Name),
		Status: RouteStatus{Kind: kind, Namespace: meta.Namespace, Name: meta.Name, Generation: meta.Generation},
	}
	resolved, refErr := resolveBackends(ctx, services, meta.Namespace, rules)
	seen := map[string]bool{}
	for _, ref := range parents {
		if !isServiceRef(ref.Group, ref.Kind, "Gateway") {
			continue
		}
		ns := meta.Namespace
		if ref.Namespace != nil {
			ns = string(*ref.Namespace)
		}
		ps := ParentStatus{Ref: *ref.DeepCopy(), Service: ns + "/" + string(ref.Name)}
		accepted := Condition{Type: ConditionAccepted, Status: true, Reason: ReasonAccepted, Message: "route accepted"}
		svc, ok := krt.FetchOne(ctx, services, krt.FilterKey(ps.Service))
		switch {
		case !ok:
			accepted = Condition{Type: ConditionAccepted, Reason: ReasonNoMatchingParent, Message: "service " + ps.Service + " not found"}
		default:
			port, err := parentPort(svc, ref)
			if err != nil {
				accepted = Condition{Type: ConditionAccepted, Reason: ReasonNoMatchingParent, Message: err.Error()}
			}
			ps.Port = port
		}
		if convErr != nil && accepted.Status {
			accepted = conditionFor(ConditionAccepted, convErr)
		}
		refs := Condition{Type: ConditionResolvedRefs, Status: true, Reason: ReasonResolvedRefs, Message: "all references resolved"}
		if refErr != nil {
			refs = conditionFor(ConditionResolvedRefs, refErr)
		}
		ps.Conditions = []Condition{accepted, refs}
		b := RouteBinding{
			Kind: kind, Namespace: meta.Namespace, Name: meta.Name, Created: meta.CreationTimestamp.Time,
			Service: ps.Service, Port: ps.Port, Rules: resolved,
		}
		res.Status.Parents = append(res.Status.Parents, ps)
		if seen[b.ResourceName()] {
			// The same service port twice binds nothing more.
			continue
		}
		seen[b.ResourceName()] = true
		if ps.InEffect() {
			res.Bindings = append(res.Bindings, b)
		}
	}
	return res
}

func conditionFor(typ string, err error) Condition {
	c := Condition{Type: typ, Reason: ReasonUnsupportedValue, Message: err.Error()}
	var re *routeError
	if errors.As(err, &re) {
		c.Reason = re.reason
	}
	return c
}

// parentPort returns the port a Service parent reference restricts the
// route to: its port, or the port its section name names; 0 for all.
func parentPort(svc ServiceInfo, ref gatewayv1.ParentReference) (int32, error) {
	if ref.Port != nil {
		if _, ok := svc.Port(*ref.Port); !ok {
			return 0, fmt.Errorf("service %s has no port %d", svc.ResourceName(), *ref.Port)
		}
		return *ref.Port, nil
	}
	if ref.SectionName != nil {
		for _, p := range svc.Ports {
			if p.Name == string(*ref.SectionName) {
				return p.Port, nil
			}
		}
		return 0, fmt.Errorf("service %s has no port named %q", svc.ResourceName(), *ref.SectionName)
	}
	return 0, nil
}

// resolveBackends resolves each rule's backend references to service port
// clusters. An unresolvable reference keeps its weight, marked
// Unresolved, so that its share fails rather than going elsewhere; the
// first such reference is returned as the error of ResolvedRefs.
func resolveBackends(ctx krt.HandlerContext, services krt.Collection[ServiceInfo], routeNS string, rules []pendingRule) ([]RouteRule, error) {
	out := make([]RouteRule, 0, len(rules))
	var firstErr error
	for _, r := range rules {
		rule := r.rule
		for _, b := range r.backends {
			w := uint32(1)
			if b.Weight != nil {
				w = uint32(max(*b.Weight, 0))
			}
			cluster, err := resolveBackend(ctx, services, routeNS, b.BackendObjectReference)
			if err != nil {
				firstErr = cmp.Or(firstErr, err)
				rule.Backends = append(rule.Backends, WeightedBackend{Weight: w, Unresolved: err.Error()})
				continue
			}
			rule.Backends = append(rule.Backends, WeightedBackend{Cluster: cluster, Weight: w})
		}
		out = append(out, rule)
	}
	return out, firstErr
}

func resolveBackend(ctx krt.HandlerContext, services krt.Collection[ServiceInfo], routeNS string, ref gatewayv1.BackendObjectReference) (string, error) {
	if !isServiceRef(ref.Group, ref.Kind, "Service") {
		return "", &routeError{ReasonInvalidKind, fmt.Sprintf("backend %s: only core Services are supported", ref.Name)}
	}
	ns := routeNS
	if ref.Namespace != nil && string(*ref.Namespace) != routeNS {
		// Cross-namespace references need a ReferenceGrant, which the mesh
		// does not read yet.
		return "", &routeError{ReasonRefNotPermitted, fmt.Sprintf("backend %s/%s: cross-namespace references are not permitted", *ref.Namespace, ref.Name)}
	}
	key := ns + "/" + string(ref.Name)
	svc, ok := krt.FetchOne(ctx, services, krt.FilterKey(key))
	if !ok {
		return "", &routeError{ReasonBackendNotFound, "service " + key + " not found"}
	}
	var port int32
	switch {
	case ref.Port != nil:
		port = *ref.Port
		if _, ok := svc.Port(port); !ok {
			return "", &routeError{ReasonBackendNotFound, fmt.Sprintf("service %s has no port %d", key, port)}
		}
	case len(svc.Ports) == 1:
		port = svc.Ports[0].Port
	default:
		return "", &routeError{ReasonBackendNotFound, fmt.Sprintf("backend %s: port is required for a service with %d ports", key, len(svc.Ports))}
	}
	return ClusterName(port, svc.Hostname), nil
}

// headerNameRE is the HTTP token syntax of header names.
var headerNameRE = regexp.MustCompile("^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")

func unsupported(format string, args ...any) error {
	return &routeError{ReasonUnsupportedValue, fmt.Sprintf(format, args...)}
}

func checkHeader(name, value string) error {
	if !headerNameRE.MatchString(name) {
		return unsupported("invalid header name %q", name)
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		return unsupported("invalid value for header %q", name)
	}
	return nil
}

func checkRegex(re string) error {
	if _, err := regexp.Compile(re); err != nil {
		return unsupported("invalid regular expression %q: %v", re, err)
	}
	return nil
}

func parseDuration(d *gatewayv1.Duration) (*time.Duration, error) {
	if d == nil {
		return nil, nil
	}
	v, err := time.ParseDuration(string(*d))
	if err != nil || v < 0 {
		return nil, unsupported("invalid duration %q", *d)
	}
	return &v, nil
}

func convertHeaderFilter(f *gatewayv1.HTTPHeaderFilter) (*HeaderModifier, error) {
	if f == nil {
		return nil, unsupported("header modifier filter without configuration")
	}
	m := &HeaderModifier{}
	for _, h := range f.Set {
		if err := checkHeader(string(h.Name), h.Value); err != nil {
			return nil, err
		}
		m.Set = append(m.Set, Header{Name: strings.ToLower(string(h.Name)), Value: h.Value})
	}
	for _, h := range f.Add {
		if err := checkHeader(string(h.Name), h.Value); err != nil {
			return nil, err
		}
		m.Add = append(m.Add, Header{Name: strings.ToLower(string(h.Name)), Value: h.Value})
	}
	for _, h := range f.Remove {
		if err := checkHeader(h, ""); err != nil {
			return nil, err
		}
		m.Remove = append(m.Remove, strings.ToLower(h))
	}
	return m, nil
}

// convertHeaderMatch converts a header or query match of type typ
// ("Exact" when empty, or "RegularExpression").
func convertHeaderMatch(typ, name, value string, header bool) (HeaderMatch, error) {
	if header {
		if err := checkHeader(name, value); err != nil {
			return HeaderMatch{}, err
		}
	} else if name == "" {
		return HeaderMatch{}, unsupported("empty query parameter name")
	}
	switch typ {
	case "", "Exact":
		return HeaderMatch{Name: name, Value: value}, nil
	case "RegularExpression":
		if err := checkRegex(value); err != nil {
			return HeaderMatch{}, err
		}
		return HeaderMatch{Name: name, Value: value, Regex: true}, nil
	}
	return HeaderMatch{}, unsupported("match type %q not supported", typ)
}

func convertHTTPMatch(m gatewayv1.HTTPRouteMatch) (RouteMatch, error) {
	out := RouteMatch{PathKind: PathPrefix, Path: "/"}
	if p := m.Path; p != nil {
		typ := gatewayv1.PathMatchPathPrefix
		if p.Type != nil {
			typ = *p.Type
		}
		value := "/"
		if p.Value != nil {
			value = *p.Value
		}
		switch typ {
		case gatewayv1.PathMatchExact, gatewayv1.PathMatchPathPrefix:
			if !strings.HasPrefix(value, "/") || strings.ContainsAny(value, "?#") {
				return out, unsupported("path %q must start with / and hold no ? or #", value)
			}
			out.PathKind, out.Path = PathPrefix, value
			if typ == gatewayv1.PathMatchExact {
				out.PathKind = PathExact
			}
		case gatewayv1.PathMatchRegularExpression:
			if err := checkRegex(value); err != nil {
				return out, err
			}
			out.PathKind, out.Path = PathRegex, value
		default:
			return out, unsupported("path match type %q not supported", typ)
		}
	}
	for _, h := range m.Headers {
		hm, err := convertHeaderMatch(string(derefOr(h.Type, "")), string(h.Name), h.Value, true)
		if err != nil {
			return out, err
		}
		out.Headers = append(out.Headers, hm)
	}
	for _, q := range m.QueryParams {
		qm, err := convertHeaderMatch(string(derefOr(q.Type, "")), string(q.Name), q.Value, false)
		if err != nil {
			return out, err
		}
		out.QueryParams = append(out.QueryParams, qm)
	}
	if m.Method != nil {
		out.Method = string(*m.Method)
	}
	return out, nil
}

// convertHTTPRule converts one HTTPRoute rule: what every route rule has
// (convertRule), then timeouts and retries, which only HTTPRoute has, then
// the backends.
func convertHTTPRule(r gatewayv1.HTTPRouteRule) (pendingRule, error) {
	var pr pendingRule
	if err := convertRule(&pr, r.Matches, convertHTTPMatch, r.Filters, httpFilter); err != nil {
		return pr, err
	}
	if err := pr.rule.convertTimeouts(r.Timeouts); err != nil {
		return pr, err
	}
	if rt := r.Retry; rt != nil {
		retry, err := convertRetry(rt)
		if err != nil {
			return pr, err
		}
		pr.rule.Retry = retry
	}
	for _, b := range r.BackendRefs {
		if err := pr.addBackend(b.BackendRef, len(b.Filters)); err != nil {
			return pr, err
		}
	}
	return pr, nil
}

// httpFilter returns an HTTPRoute filter's type and header modifiers.
func httpFilter(f gatewayv1.HTTPRouteFilter) (string, *gatewayv1.HTTPHeaderFilter, *gatewayv1.HTTPHeaderFilter) {
	return string(f.Type), f.RequestHeaderModifier, f.ResponseHeaderModifier
}

// convertTimeouts sets the request and backend request timeouts of t.
func (r *RouteRule) convertTimeouts(t *gatewayv1.HTTPRouteTimeouts) error {
	if t == nil {
		return nil
	}
	var err error
	if r.Timeout, err = parseDuration(t.Request); err != nil {
		return fmt.Errorf("request timeout: %w", err)
	}
	if r.BackendTimeout, err = parseDuration(t.BackendRequest); err != nil {
		return fmt.Errorf("backend request timeout: %w", err)
	}
	return nil
}

// convertRetry converts an HTTPRoute rule's retry policy.
func convertRetry(rt *gatewayv1.HTTPRouteRetry) (*Retry, error) {
	retry := &Retry{}
	if rt.Attempts != nil {
		if *rt.Attempts < 0 {
			return nil, unsupported("negative retry attempts")
		}
		retry.Attempts = int32(*rt.Attempts)
	}
	for _, c := range rt.Codes {
		if c < 400 || c > 599 {
			return nil, unsupported("retry code %d out of 400-599", c)
		}
		retry.Codes = append(retry.Codes, int32(c))
	}
	b, err := parseDuration(rt.Backoff)
	if err != nil {
		return nil, fmt.Errorf("retry backoff: %w", err)
	}
	if b != nil {
		retry.Backoff = *b
	}
	return retry, nil
}

func convertGRPCMatch(m gatewayv1.GRPCRouteMatch) (RouteMatch, error) {
	out := RouteMatch{PathKind: PathPrefix, Path: "/"}
	if mm := m.Method; mm != nil {
		svc, method := derefOr(mm.Service, ""), derefOr(mm.Method, "")
		typ := gatewayv1.GRPCMethodMatchExact
		if mm.Type != nil {
			typ = *mm.Type
		}
		switch typ {
		case gatewayv1.GRPCMethodMatchExact:
			if strings.ContainsAny(svc+method, "/?#") {
				return out, unsupported("invalid gRPC service %q or method %q", svc, method)
			}
			switch {
			case svc != "" && method != "":
				out.PathKind, out.Path = PathExact, "/"+svc+"/"+method
			case svc != "":
				out.PathKind, out.Path = PathStringPrefix, "/"+svc+"/"
			case method != "":
				out.PathKind, out.Path = PathRegex, "/[^/]+/"+regexp.QuoteMeta(method)
			}
		case gatewayv1.GRPCMethodMatchRegularExpression:
			s, me := "[^/]+", "[^/]+"
			if svc != "" {
				if err := checkRegex(svc); err != nil {
					return out, err
				}
				s = svc
			}
			if method != "" {
				if err := checkRegex(method); err != nil {
					return out, err
				}
				me = method
			}
			out.PathKind, out.Path = PathRegex, "/"+s+"/"+me
		default:
			return out, unsupported("method match type %q not supported", typ)
		}
	}
	for _, h := range m.Headers {
		hm, err := convertHeaderMatch(string(derefOr(h.Type, "")), string(h.Name), h.Value, true)
		if err != nil {
			return out, err
		}
		out.Headers = append(out.Headers, hm)
	}
	return out, nil
}

// convertGRPCRule converts one GRPCRoute rule: what every route rule has
// (convertRule), then the backends.
func convertGRPCRule(r gatewayv1.GRPCRouteRule) (pendingRule, error) {
	var pr pendingRule
	if err := convertRule(&pr, r.Matches, convertGRPCMatch, r.Filters, grpcFilter); err != nil {
		return pr, err
	}
	for _, b := range r.BackendRefs {
		if err := pr.addBackend(b.BackendRef, len(b.Filters)); err != nil {
			return pr, err
		}
	}
	return pr, nil
}

// grpcFilter returns a GRPCRoute filter's type and header modifiers.
func grpcFilter(f gatewayv1.GRPCRouteFilter) (string, *gatewayv1.HTTPHeaderFilter, *gatewayv1.HTTPHeaderFilter) {
	return string(f.Type), f.RequestHeaderModifier, f.ResponseHeaderModifier
}
