package collections

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// routeString renders a route compactly: "match => action [options]".
func routeString(r *routev3.Route) string {
	var b strings.Builder
	writeMatch(&b, r.Match)
	b.WriteString(" =>")
	switch a := r.Action.(type) {
	case *routev3.Route_DirectResponse:
		fmt.Fprintf(&b, " %d", a.DirectResponse.Status)
	case *routev3.Route_Route:
		writeRouteAction(&b, a.Route)
	}
	for _, h := range r.RequestHeadersToAdd {
		fmt.Fprintf(&b, " req+%s=%s(%s)", h.Header.Key, h.Header.Value, h.AppendAction)
	}
	for _, h := range r.RequestHeadersToRemove {
		fmt.Fprintf(&b, " req-%s", h)
	}
	for _, h := range r.ResponseHeadersToAdd {
		fmt.Fprintf(&b, " resp+%s=%s(%s)", h.Header.Key, h.Header.Value, h.AppendAction)
	}
	return b.String()
}

// writeMatch renders a route's match: path, then headers, then query.
func writeMatch(b *strings.Builder, m *routev3.RouteMatch) {
	switch p := m.PathSpecifier.(type) {
	case *routev3.RouteMatch_Prefix:
		b.WriteString("prefix:" + p.Prefix)
	case *routev3.RouteMatch_Path:
		b.WriteString("path:" + p.Path)
	case *routev3.RouteMatch_SafeRegex:
		b.WriteString("regex:" + p.SafeRegex.Regex)
	case *routev3.RouteMatch_PathSeparatedPrefix:
		b.WriteString("sep:" + p.PathSeparatedPrefix)
	}
	for _, h := range m.Headers {
		sm := h.GetStringMatch()
		if re := sm.GetSafeRegex(); re != nil {
			fmt.Fprintf(b, " h:%s~%s", h.Name, re.Regex)
		} else {
			fmt.Fprintf(b, " h:%s=%s", h.Name, sm.GetExact())
		}
	}
	for _, q := range m.QueryParameters {
		fmt.Fprintf(b, " q:%s=%s", q.Name, q.GetStringMatch().GetExact())
	}
}

// writeRouteAction renders a forwarding action: its clusters, timeouts and
// retry policy.
func writeRouteAction(b *strings.Builder, ra *routev3.RouteAction) {
	if c := ra.GetCluster(); c != "" {
		b.WriteString(" " + shortCluster(c))
	}
	for _, w := range ra.GetWeightedClusters().GetClusters() {
		fmt.Fprintf(b, " %s*%d", shortCluster(w.Name), w.Weight.GetValue())
	}
	if ra.ClusterNotFoundResponseCode != routev3.RouteAction_SERVICE_UNAVAILABLE {
		fmt.Fprintf(b, " notfound=%s", ra.ClusterNotFoundResponseCode)
	}
	if ra.Timeout != nil {
		fmt.Fprintf(b, " timeout=%s", ra.Timeout.AsDuration())
	}
	if d := ra.GetMaxStreamDuration().GetMaxStreamDuration(); d != nil {
		fmt.Fprintf(b, " maxstream=%s", d.AsDuration())
	}
	rp := ra.RetryPolicy
	if rp == nil {
		return
	}
	fmt.Fprintf(b, " retry=%s/%d", rp.RetryOn, rp.NumRetries.GetValue())
	if len(rp.RetriableStatusCodes) > 0 {
		fmt.Fprintf(b, "%v", rp.RetriableStatusCodes)
	}
	if rp.PerTryTimeout != nil {
		fmt.Fprintf(b, " pertry=%s", rp.PerTryTimeout.AsDuration())
	}
	if bo := rp.RetryBackOff; bo != nil {
		fmt.Fprintf(b, " backoff=%s", bo.BaseInterval.AsDuration())
	}
}

// shortCluster turns "outbound|80||v1.ns.svc.cluster.local" into "v1:80",
// and the invalid backend clusters into "invalid" (gRPC) and
// "notfound" (Envoy).
func shortCluster(c string) string {
	switch c {
	case InvalidBackendCluster:
		return "invalid"
	case envoyInvalidBackendCluster:
		return "notfound"
	}
	parts := strings.Split(c, "|")
	return strings.SplitN(parts[3], ".", 2)[0] + ":" + parts[1]
}

func vhostRoutes(rc *routev3.RouteConfiguration, vhost string) []string {
	for _, vh := range rc.VirtualHosts {
		if vh.Name == vhost {
			var out []string
			for _, r := range vh.Routes {
				out = append(out, routeString(r))
			}
			return out
		}
	}
	return nil
}

func statusString(s RouteStatus) string {
	var parts []string
	for _, p := range s.Parents {
		var cs []string
		for _, c := range p.Conditions {
			cs = append(cs, fmt.Sprintf("%s=%v(%s)", c.Type, c.Status, c.Reason))
		}
		parts = append(parts, fmt.Sprintf("%s:%d %s", p.Service, p.Port, strings.Join(cs, " ")))
	}
	return strings.Join(parts, "; ")
}

// routeServices are the services the route tests run against: web (HTTP
// on 80, gRPC on 9090) and its versions v1, v2, each with one pod.
func routeServices() []*corev1.Service {
	var out []*corev1.Service
	for _, n := range []string{"web", "v1", "v2"} {
		out = append(out, service("ns", n, map[string]string{"app": n}, svcPort("http", 80, 8080), svcPort("grpc", 9090, 9090)))
	}
	out = append(out, service("other", "far", map[string]string{"app": "far"}, svcPort("http", 80, 8080)))
	return out
}

// newRouteModel returns a model over routeServices and routes.
func newRouteModel(routes ...any) *Model {
	_, in, m := newTestModel()
	set(in, routeServices()...)
	in.Set(routes...)
	return m
}

// expectRoutes checks the routes of virtual host vhost in the route
// configuration named rc; what names them in the error.
func expectRoutes(t *testing.T, m *Model, what, rc, vhost string, want []string) {
	t.Helper()
	c, _ := m.RouteConfigurations.Get(rc)
	if got := vhostRoutes(c.Message(), vhost); !slices.Equal(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func d(s string) *gatewayv1.Duration { return ptr(gatewayv1.Duration(s)) }

// An httpRouteCase is a route added beside routeServices, and what it
// yields.
type httpRouteCase struct {
	name    string
	route   *gatewayv1.HTTPRoute
	status  string
	grpc80  []string // routes of the gRPC route config web:80
	grpc90  []string // routes of the gRPC route config web:9090
	envoy80 []string // routes of web's virtual host in the sidecar route config "80"
}

// The status of a route accepted on every port of web, and web's own
// default routes.
const (
	acceptedOnWeb    = "ns/web:0 Accepted=true(Accepted) ResolvedRefs=true(ResolvedRefs)"
	dflt80, dflt9090 = "prefix:/ => web:80", "prefix:/ => web:9090"
)

// httpRouteMatchCases translate splits, parent ports and matches.
func httpRouteMatchCases() []httpRouteCase {
	exact, prefix, regex := ptr(gatewayv1.PathMatchExact), ptr(gatewayv1.PathMatchPathPrefix), ptr(gatewayv1.PathMatchRegularExpression)
	return []httpRouteCase{
		{
			name: "weighted split on every port",
			route: httpRoute("ns", "split", serviceParent("web", nil),
				gatewayv1.HTTPRouteRule{BackendRefs: []gatewayv1.HTTPBackendRef{backend("v1", 80, 90), backend("v2", 80, 10)}}),
			status:  acceptedOnWeb,
			grpc80:  []string{"prefix:/ => v1:80*90 v2:80*10", dflt80},
			grpc90:  []string{"prefix:/ => v1:80*90 v2:80*10", dflt9090},
			envoy80: []string{"prefix:/ => v1:80*90 v2:80*10", dflt80},
		},
		{
			name: "parent port restricts the route to one port; zero weights dropped",
			route: httpRoute("ns", "port", serviceParent("web", ptr(int32(9090))),
				gatewayv1.HTTPRouteRule{BackendRefs: []gatewayv1.HTTPBackendRef{backend("v1", 9090, 0), backend("v2", 9090, 100)}}),
			status: "ns/web:9090 Accepted=true(Accepted) ResolvedRefs=true(ResolvedRefs)",
			grpc80: []string{dflt80},
			grpc90: []string{"prefix:/ => v2:9090", dflt9090},
		},
		{
			name: "matches: path kinds, headers, method, query",
			route: httpRoute("ns", "matches", serviceParent("web", ptr(int32(80))), gatewayv1.HTTPRouteRule{
				Matches: []gatewayv1.HTTPRouteMatch{
					{Path: &gatewayv1.HTTPPathMatch{Type: prefix, Value: ptr("/api/")},
						Headers: []gatewayv1.HTTPHeaderMatch{{Name: "X-Env", Value: "canary"}}},
					{Path: &gatewayv1.HTTPPathMatch{Type: exact, Value: ptr("/login")}, Method: ptr(gatewayv1.HTTPMethodPost)},
					{Path: &gatewayv1.HTTPPathMatch{Type: regex, Value: ptr("/v[0-9]+/.*")},
						Headers:     []gatewayv1.HTTPHeaderMatch{{Name: "x-user", Type: ptr(gatewayv1.HeaderMatchRegularExpression), Value: "a.*"}},
						QueryParams: []gatewayv1.HTTPQueryParamMatch{{Name: "debug", Value: "1"}}},
					{Path: &gatewayv1.HTTPPathMatch{Type: exact, Value: ptr("/items")}, Method: ptr(gatewayv1.HTTPMethodGet)},
				},
				BackendRefs: []gatewayv1.HTTPBackendRef{backend("v1", 80, 1)},
			}),
			status: "ns/web:80 Accepted=true(Accepted) ResolvedRefs=true(ResolvedRefs)",
			grpc80: []string{
				"path:/login => v1:80", // every gRPC call is a POST; GET never matches
				"regex:/v[0-9]+/.* h:x-user~a.* q:debug=1 => v1:80",
				"regex:/api(/.*)? h:x-env=canary => v1:80",
				dflt80,
			},
			grpc90: []string{dflt9090},
			envoy80: []string{
				"path:/login h::method=POST => v1:80",
				"path:/items h::method=GET => v1:80",
				"regex:/v[0-9]+/.* h:x-user~a.* q:debug=1 => v1:80",
				"sep:/api h:x-env=canary => v1:80",
				dflt80,
			},
		},
	}
}

// httpRouteRuleCases carry a rule's policies, or fields meshd refuses.
func httpRouteRuleCases() []httpRouteCase {
	regex := ptr(gatewayv1.PathMatchRegularExpression)
	return []httpRouteCase{
		{
			name: "timeouts, retries and header modifiers",
			route: httpRoute("ns", "policy", serviceParent("web", ptr(int32(80))), gatewayv1.HTTPRouteRule{
				BackendRefs: []gatewayv1.HTTPBackendRef{backend("v1", 80, 1)},
				Timeouts:    &gatewayv1.HTTPRouteTimeouts{Request: d("5s"), BackendRequest: d("1s")},
				Retry:       &gatewayv1.HTTPRouteRetry{Attempts: ptr(3), Codes: []gatewayv1.HTTPRouteRetryStatusCode{503, 504, 404}, Backoff: d("100ms")},
				Filters: []gatewayv1.HTTPRouteFilter{
					{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{
						Set: []gatewayv1.HTTPHeader{{Name: "X-Route", Value: "policy"}}, Add: []gatewayv1.HTTPHeader{{Name: "x-hop", Value: "1"}},
						Remove: []string{"x-debug"}}},
					{Type: gatewayv1.HTTPRouteFilterResponseHeaderModifier, ResponseHeaderModifier: &gatewayv1.HTTPHeaderFilter{
						Set: []gatewayv1.HTTPHeader{{Name: "x-served-by", Value: "mesh"}}}},
				},
			}),
			status: "ns/web:80 Accepted=true(Accepted) ResolvedRefs=true(ResolvedRefs)",
			grpc80: []string{"prefix:/ => v1:80 maxstream=5s retry=unavailable,deadline-exceeded/3 backoff=100ms", dflt80},
			grpc90: []string{dflt9090},
			envoy80: []string{"prefix:/ => v1:80 timeout=5s retry=connect-failure,refused-stream,retriable-status-codes/3[503 504 404] pertry=1s backoff=100ms" +
				" req+x-route=policy(OVERWRITE_IF_EXISTS_OR_ADD) req+x-hop=1(APPEND_IF_EXISTS_OR_ADD) req-x-debug resp+x-served-by=mesh(OVERWRITE_IF_EXISTS_OR_ADD)", dflt80},
		},
		{
			name: "unsupported filter",
			route: httpRoute("ns", "redirect", serviceParent("web", nil), gatewayv1.HTTPRouteRule{
				Filters:     []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{}}},
				BackendRefs: []gatewayv1.HTTPBackendRef{backend("v1", 80, 1)}}),
			status: "ns/web:0 Accepted=false(UnsupportedValue) ResolvedRefs=true(ResolvedRefs)",
			grpc80: []string{dflt80}, grpc90: []string{dflt9090},
		},
		{
			name: "invalid regex and bad duration",
			route: httpRoute("ns", "regex", serviceParent("web", nil), gatewayv1.HTTPRouteRule{
				Matches:     []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: regex, Value: ptr("/(")}}},
				BackendRefs: []gatewayv1.HTTPBackendRef{backend("v1", 80, 1)}}, gatewayv1.HTTPRouteRule{
				Timeouts:    &gatewayv1.HTTPRouteTimeouts{Request: d("soon")},
				BackendRefs: []gatewayv1.HTTPBackendRef{backend("v1", 80, 1)}}),
			status: "ns/web:0 Accepted=false(UnsupportedValue) ResolvedRefs=true(ResolvedRefs)",
			grpc80: []string{dflt80}, grpc90: []string{dflt9090},
		},
		{
			name: "invalid header name",
			route: httpRoute("ns", "header", serviceParent("web", nil), gatewayv1.HTTPRouteRule{
				Matches:     []gatewayv1.HTTPRouteMatch{{Headers: []gatewayv1.HTTPHeaderMatch{{Name: "bad header", Value: "x"}}}},
				BackendRefs: []gatewayv1.HTTPBackendRef{backend("v1", 80, 1)}}),
			status: "ns/web:0 Accepted=false(UnsupportedValue) ResolvedRefs=true(ResolvedRefs)",
			grpc80: []string{dflt80}, grpc90: []string{dflt9090},
		},
	}
}

// httpRouteBackendCases name backends that are missing, unnamed or not
// permitted.
func httpRouteBackendCases() []httpRouteCase {
	return []httpRouteCase{
		{
			name:   "no backend answers 500",
			route:  httpRoute("ns", "none", serviceParent("web", ptr(int32(80))), gatewayv1.HTTPRouteRule{}),
			status: "ns/web:80 Accepted=true(Accepted) ResolvedRefs=true(ResolvedRefs)",
			grpc80: []string{"prefix:/ => 500", dflt80},
			grpc90: []string{dflt9090},
		},
		{
			name: "missing backend: its share fails, BackendNotFound",
			route: httpRoute("ns", "missing", serviceParent("web", nil),
				gatewayv1.HTTPRouteRule{BackendRefs: []gatewayv1.HTTPBackendRef{backend("v1", 80, 70), backend("nope", 80, 20), backend("gone", 80, 10)}}),
			status:  "ns/web:0 Accepted=true(Accepted) ResolvedRefs=false(BackendNotFound)",
			grpc80:  []string{"prefix:/ => v1:80*70 invalid*30", dflt80},
			grpc90:  []string{"prefix:/ => v1:80*70 invalid*30", dflt9090},
			envoy80: []string{"prefix:/ => v1:80*70 notfound*30 notfound=INTERNAL_SERVER_ERROR", dflt80},
		},
		{
			name: "backend port missing on the service: the rule answers 500",
			route: httpRoute("ns", "badport", serviceParent("web", nil),
				gatewayv1.HTTPRouteRule{BackendRefs: []gatewayv1.HTTPBackendRef{backend("v1", 81, 1)}}),
			status:  "ns/web:0 Accepted=true(Accepted) ResolvedRefs=false(BackendNotFound)",
			grpc80:  []string{"prefix:/ => 500", dflt80},
			grpc90:  []string{"prefix:/ => 500", dflt9090},
			envoy80: []string{"prefix:/ => 500", dflt80},
		},
		{
			name: "backend without port on a multi-port service",
			route: httpRoute("ns", "noport", serviceParent("web", nil), gatewayv1.HTTPRouteRule{BackendRefs: []gatewayv1.HTTPBackendRef{{
				BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: "v1"}}}}}),
			status: "ns/web:0 Accepted=true(Accepted) ResolvedRefs=false(BackendNotFound)",
			grpc80: []string{"prefix:/ => 500", dflt80}, grpc90: []string{"prefix:/ => 500", dflt9090},
		},
		{
			name: "cross-namespace backend not permitted",
			route: httpRoute("ns", "cross", serviceParent("web", nil), gatewayv1.HTTPRouteRule{BackendRefs: []gatewayv1.HTTPBackendRef{{
				BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
					Name: "far", Namespace: ptr(gatewayv1.Namespace("other")), Port: ptr(int32(80))}}}}}),
			status: "ns/web:0 Accepted=true(Accepted) ResolvedRefs=false(RefNotPermitted)",
			grpc80: []string{"prefix:/ => 500", dflt80}, grpc90: []string{"prefix:/ => 500", dflt9090},
		},
		{
			name: "backend of another kind, beside a zero-weight missing one",
			route: httpRoute("ns", "kind", serviceParent("web", nil), gatewayv1.HTTPRouteRule{BackendRefs: []gatewayv1.HTTPBackendRef{{
				BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
					Group: ptr(gatewayv1.Group("example.com")), Kind: ptr(gatewayv1.Kind("Bucket")), Name: "b"}}},
				backend("v2", 80, 3), backend("nope", 80, 0)}}),
			status: "ns/web:0 Accepted=true(Accepted) ResolvedRefs=false(InvalidKind)",
			grpc80: []string{"prefix:/ => v2:80*3 invalid*1", dflt80}, grpc90: []string{"prefix:/ => v2:80*3 invalid*1", dflt9090},
		},
	}
}

// httpRouteParentCases name parents that are not the mesh's services.
func httpRouteParentCases() []httpRouteCase {
	return []httpRouteCase{
		{
			name: "missing parent service and missing parent port",
			route: func() *gatewayv1.HTTPRoute {
				r := httpRoute("ns", "orphan", serviceParent("ghost", nil),
					gatewayv1.HTTPRouteRule{BackendRefs: []gatewayv1.HTTPBackendRef{backend("v1", 80, 1)}})
				r.Spec.ParentRefs = append(r.Spec.ParentRefs, serviceParent("web", ptr(int32(7))))
				return r
			}(),
			status: "ns/ghost:0 Accepted=false(NoMatchingParent) ResolvedRefs=true(ResolvedRefs); ns/web:0 Accepted=false(NoMatchingParent) ResolvedRefs=true(ResolvedRefs)",
			grpc80: []string{dflt80}, grpc90: []string{dflt9090},
		},
		{
			name: "gateway parent is not the mesh's",
			route: httpRoute("ns", "gw", gatewayv1.ParentReference{Name: "ingress"},
				gatewayv1.HTTPRouteRule{BackendRefs: []gatewayv1.HTTPBackendRef{backend("v1", 80, 1)}}),
			grpc80: []string{dflt80}, grpc90: []string{dflt9090},
		},
	}
}

func TestHTTPRoutes(t *testing.T) {
	cases := slices.Concat(httpRouteMatchCases(), httpRouteRuleCases(), httpRouteBackendCases(), httpRouteParentCases())
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newRouteModel(tc.route)
			st, ok := m.RouteStatus.Get(RouteKey(KindHTTPRoute, "ns", tc.route.Name))
			if got := statusString(st); got != tc.status || ok != (tc.status != "") {
				t.Errorf("status:\n got %q (present %v)\nwant %q", got, ok, tc.status)
			}
			expectRoutes(t, m, "gRPC routes of port 80", "web.ns.svc.cluster.local:80", "web.ns.svc.cluster.local:80", tc.grpc80)
			expectRoutes(t, m, "gRPC routes of port 9090", "web.ns.svc.cluster.local:9090", "web.ns.svc.cluster.local:9090", tc.grpc90)
			if tc.envoy80 != nil {
				expectRoutes(t, m, "sidecar routes of port 80", "80", "web.ns.svc.cluster.local:80", tc.envoy80)
			}
			validateModel(t, m)
		})
	}
}

func TestGRPCRoutes(t *testing.T) {
	exactM := func(svc, method string) gatewayv1.GRPCRouteMatch {
		m := &gatewayv1.GRPCMethodMatch{}
		if svc != "" {
			m.Service = ptr(svc)
		}
		if method != "" {
			m.Method = ptr(method)
		}
		return gatewayv1.GRPCRouteMatch{Method: m}
	}
	regexM := exactM("pkg\\..*", "")
	regexM.Method.Type = ptr(gatewayv1.GRPCMethodMatchRegularExpression)
	route := grpcRoute("ns", "grpc", serviceParent("web", ptr(int32(9090))),
		gatewayv1.GRPCRouteRule{
			Matches:     []gatewayv1.GRPCRouteMatch{exactM("pkg.Echo", "Say")},
			BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: backendRef("v1", 9090, 1)}},
		},
		gatewayv1.GRPCRouteRule{
			Matches: []gatewayv1.GRPCRouteMatch{exactM("pkg.Echo", ""), exactM("", "Ping"), regexM,
				{Headers: []gatewayv1.GRPCHeaderMatch{{Name: "x-tenant", Value: "a"}}}},
			BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: backendRef("v2", 9090, 3)}, {BackendRef: backendRef("v1", 9090, 1)}},
		})
	m := newRouteModel(route)
	st, _ := m.RouteStatus.Get("GRPCRoute/ns/grpc")
	if got, want := statusString(st), "ns/web:9090 Accepted=true(Accepted) ResolvedRefs=true(ResolvedRefs)"; got != want {
		t.Errorf("status %q, want %q", got, want)
	}
	expectRoutes(t, m, "routes", "web.ns.svc.cluster.local:9090", "web.ns.svc.cluster.local:9090", []string{
		"path:/pkg.Echo/Say => v1:9090",
		// Regular expressions: the longer one first.
		`regex:/pkg\..*/[^/]+ => v2:9090*3 v1:9090*1`,
		`regex:/[^/]+/Ping => v2:9090*3 v1:9090*1`,
		"prefix:/pkg.Echo/ => v2:9090*3 v1:9090*1",
		"prefix:/ h:x-tenant=a => v2:9090*3 v1:9090*1",
		"prefix:/ => web:9090",
	})
	validateModel(t, m)
}

func TestRoutePrecedenceAcrossRoutes(t *testing.T) {
	old := metav1.NewTime(time.Unix(100, 0))
	young := metav1.NewTime(time.Unix(200, 0))
	prefix := func(p string) []gatewayv1.HTTPRouteMatch {
		return []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr(gatewayv1.PathMatchPathPrefix), Value: ptr(p)}}}
	}
	a := httpRoute("ns", "a-young", serviceParent("web", nil),
		gatewayv1.HTTPRouteRule{Matches: prefix("/shop"), BackendRefs: []gatewayv1.HTTPBackendRef{backend("v2", 80, 1)}},
		gatewayv1.HTTPRouteRule{Matches: prefix("/"), BackendRefs: []gatewayv1.HTTPBackendRef{backend("v2", 80, 1)}})
	a.CreationTimestamp = young
	b := httpRoute("ns", "b-old", serviceParent("web", nil),
		gatewayv1.HTTPRouteRule{Matches: prefix("/shop"), BackendRefs: []gatewayv1.HTTPBackendRef{backend("v1", 80, 1)}},
		gatewayv1.HTTPRouteRule{Matches: prefix("/shop/cart"), BackendRefs: []gatewayv1.HTTPBackendRef{backend("v1", 9090, 1)}})
	b.CreationTimestamp = old
	m := newRouteModel(a, b)
	expectRoutes(t, m, "routes", "80", "web.ns.svc.cluster.local:80", []string{
		"sep:/shop/cart => v1:9090", // longest prefix
		"sep:/shop => v1:80",        // same prefix: the older route wins
		"sep:/shop => v2:80",
		"prefix:/ => v2:80",
		"prefix:/ => web:80",
	})
	validateModel(t, m)
}

func TestRouteFollowsBackendLifecycle(t *testing.T) {
	_, in, m := newTestModel()
	in.Set(service("ns", "web", map[string]string{"app": "web"}, svcPort("grpc", 9090, 9090)))
	in.Set(httpRoute("ns", "r", serviceParent("web", nil),
		gatewayv1.HTTPRouteRule{BackendRefs: []gatewayv1.HTTPBackendRef{backend("v1", 9090, 1)}}))
	routes := func() []string {
		rc, _ := m.GRPCRouteConfigurations.Get("web.ns.svc.cluster.local:9090")
		return vhostRoutes(rc.Message(), "web.ns.svc.cluster.local:9090")
	}
	st, _ := m.RouteStatus.Get("HTTPRoute/ns/r")
	if st.Parents[0].Accepted() || !st.Parents[0].InEffect() || !slices.Equal(routes(), []string{"prefix:/ => 500", "prefix:/ => web:9090"}) {
		t.Fatalf("before the backend exists: status %s, routes %q", statusString(st), routes())
	}
	in.Set(service("ns", "v1", map[string]string{"app": "v1"}, svcPort("grpc", 9090, 9090)))
	st, _ = m.RouteStatus.Get("HTTPRoute/ns/r")
	if !st.Parents[0].Accepted() || !slices.Equal(routes(), []string{"prefix:/ => v1:9090", "prefix:/ => web:9090"}) {
		t.Fatalf("once the backend exists: status %s, routes %q", statusString(st), routes())
	}
	if _, ok := m.Clusters.Get("outbound|9090||v1.ns.svc.cluster.local"); !ok {
		t.Error("the backend's cluster is missing")
	}
	del[*corev1.Service](in, "ns/v1")
	if !slices.Equal(routes(), []string{"prefix:/ => 500", "prefix:/ => web:9090"}) || m.RouteBindings.Len() != 1 {
		t.Fatalf("after the backend is deleted: routes %q, bindings %d", routes(), m.RouteBindings.Len())
	}
	del[*gatewayv1.HTTPRoute](in, "ns/r")
	if m.RouteStatus.Len() != 0 {
		t.Errorf("status kept after the route is deleted")
	}
}

// TestRouteClustersExist checks the invariant gRPC clients depend on:
// every cluster a route configuration names is a cluster of the model.
func TestRouteClustersExist(t *testing.T) {
	m := newRouteModel(httpRoute("ns", "split", serviceParent("web", nil),
		gatewayv1.HTTPRouteRule{BackendRefs: []gatewayv1.HTTPBackendRef{backend("v1", 80, 90), backend("v2", 9090, 10)}}))
	named := 0
	for _, rc := range m.RouteConfigurations.List() {
		for _, vh := range rc.Message().VirtualHosts {
			for _, r := range vh.Routes {
				ra := r.GetRoute()
				names := []string{ra.GetCluster()}
				for _, w := range ra.GetWeightedClusters().GetClusters() {
					names = append(names, w.Name)
				}
				for _, n := range names {
					if n == "" {
						continue
					}
					named++
					if _, ok := m.Clusters.Get(n); !ok {
						t.Errorf("route config %s names unknown cluster %s", rc.Name, n)
					}
				}
			}
		}
	}
	if named == 0 {
		t.Fatal("no cluster named")
	}
}

// TestRouteStatusPerParentRef: a route's status holds one entry per
// Service parentRef, in spec order and naming the ref as written, also for
// a ref naming the same service port as an earlier one (by port, then by
// section name); the route binds to that port once.
func TestRouteStatusPerParentRef(t *testing.T) {
	_, in, m := newTestModel()
	in.Set(service("ns", "web", map[string]string{"app": "web"}, svcPort("http", 80, 8080)))
	byPort := serviceParent("web", ptr(int32(80)))
	bySection := serviceParent("web", nil)
	bySection.SectionName = ptr(gatewayv1.SectionName("http"))
	gateway := gatewayv1.ParentReference{Name: "gw"}
	r := httpRoute("ns", "r", byPort, gatewayv1.HTTPRouteRule{BackendRefs: []gatewayv1.HTTPBackendRef{backend("web", 80, 1)}})
	r.Spec.ParentRefs = []gatewayv1.ParentReference{gateway, byPort, bySection}
	in.Set(r)

	st, ok := m.RouteStatus.Get("HTTPRoute/ns/r")
	if !ok || len(st.Parents) != 2 {
		t.Fatalf("status %s: want two parents", statusString(st))
	}
	for i, want := range []gatewayv1.ParentReference{byPort, bySection} {
		p := st.Parents[i]
		if !reflect.DeepEqual(p.Ref, want) || p.Service != "ns/web" || p.Port != 80 || !p.Accepted() {
			t.Errorf("parent %d = %+v, want ref %+v, ns/web:80, accepted", i, p, want)
		}
	}
	if n := len(m.RouteBindings.List()); n != 1 {
		t.Errorf("%d bindings, want 1: the same port twice binds once", n)
	}
}
