package collections

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshd/meshd/sources/meshconfig"
)

// The input set of the determinism property test (determinism_test.go): a
// small cluster that touches every path of the model. Finals are the state
// every replica ends with; extras only appear in histories, added and
// deleted again before the end.

// detT0 is the creation time of most routes: routes of equal precedence
// created in the same second tie-break on their keys.
var detT0 = metav1.NewTime(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))

type detUniverse struct {
	namespaces []*corev1.Namespace
	nodes      []*corev1.Node
	services   []*corev1.Service
	pods       []*corev1.Pod
	slices     []*discoveryv1.EndpointSlice
	http       []*gatewayv1.HTTPRoute
	grpc       []*gatewayv1.GRPCRoute
	mesh       meshconfig.MeshConfig

	extraNamespaces []*corev1.Namespace
	extraNodes      []*corev1.Node
	extraServices   []*corev1.Service
	extraPods       []*corev1.Pod
	extraSlices     []*discoveryv1.EndpointSlice
	extraHTTP       []*gatewayv1.HTTPRoute
	extraGRPC       []*gatewayv1.GRPCRoute
}

func detNamespace(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// detService is a service with its own cluster IP ("None" for a headless one) and
// exportTo annotation ("" for none).
func detService(ns, name, ip string, sel map[string]string, exportTo string, ports ...corev1.ServicePort) *corev1.Service {
	s := service(ns, name, sel, ports...)
	s.Spec.ClusterIP = ip
	if exportTo != "" {
		s.Annotations = map[string]string{AnnotationExportTo: exportTo}
	}
	s.CreationTimestamp = detT0
	return s
}

// detPod is a pod on node with an IPv4 and an IPv6 address (only the
// primary is read) and the named container ports given as name, number
// pairs.
func detPod(ns, name, ip, node string, labels map[string]string, ready bool, namedPorts ...any) *corev1.Pod {
	p := pod(ns, name, ip, labels, ready)
	p.Spec.NodeName = node
	if ip != "" {
		p.Status.PodIPs = []corev1.PodIP{{IP: ip}, {IP: "fd00::" + fmt.Sprint(len(name)*7+len(ip))}}
	}
	var ports []corev1.ContainerPort
	for i := 0; i+1 < len(namedPorts); i += 2 {
		ports = append(ports, corev1.ContainerPort{Name: namedPorts[i].(string), ContainerPort: int32(namedPorts[i+1].(int))})
	}
	p.Spec.Containers = []corev1.Container{{Name: "app", Ports: ports}, {Name: "sidecar"}}
	return p
}

func detHTTPRoute(ns, name string, created metav1.Time, parents []gatewayv1.ParentReference, rules ...gatewayv1.HTTPRouteRule) *gatewayv1.HTTPRoute {
	r := httpRoute(ns, name, parents[0], rules...)
	r.Spec.ParentRefs = parents
	r.CreationTimestamp = created
	r.Generation = 1
	return r
}

func detGRPCRoute(ns, name string, created metav1.Time, parents []gatewayv1.ParentReference, rules ...gatewayv1.GRPCRouteRule) *gatewayv1.GRPCRoute {
	r := grpcRoute(ns, name, parents[0], rules...)
	r.Spec.ParentRefs = parents
	r.CreationTimestamp = created
	r.Generation = 2
	return r
}

func detParents(ps ...gatewayv1.ParentReference) []gatewayv1.ParentReference { return ps }

func detInNamespace(p gatewayv1.ParentReference, ns string) gatewayv1.ParentReference {
	p.Namespace = ptr(gatewayv1.Namespace(ns))
	return p
}

func detSectionParent(name, section string) gatewayv1.ParentReference {
	p := serviceParent(name, nil)
	p.SectionName = ptr(gatewayv1.SectionName(section))
	return p
}

func detPath(typ gatewayv1.PathMatchType, value string) gatewayv1.HTTPRouteMatch {
	return gatewayv1.HTTPRouteMatch{Path: &gatewayv1.HTTPPathMatch{Type: ptr(typ), Value: ptr(value)}}
}

func detGRPCMethod(svc, method string, regex bool) gatewayv1.GRPCRouteMatch {
	m := &gatewayv1.GRPCMethodMatch{}
	if svc != "" {
		m.Service = ptr(svc)
	}
	if method != "" {
		m.Method = ptr(method)
	}
	if regex {
		m.Type = ptr(gatewayv1.GRPCMethodMatchRegularExpression)
	}
	return gatewayv1.GRPCRouteMatch{Method: m}
}

func detGRPCBackends(refs ...gatewayv1.BackendRef) []gatewayv1.GRPCBackendRef {
	out := make([]gatewayv1.GRPCBackendRef, len(refs))
	for i, r := range refs {
		out[i] = gatewayv1.GRPCBackendRef{BackendRef: r}
	}
	return out
}

func detHTTPBackends(refs ...gatewayv1.HTTPBackendRef) []gatewayv1.HTTPBackendRef { return refs }

func newDetUniverse() detUniverse {
	u := detUniverse{
		mesh: detMesh(), namespaces: detNamespaces(), nodes: detNodes(), services: detServices(), pods: detPods(),
		slices: detSlices(), http: append(detHTTPRoutes(), detMoreHTTPRoutes()...), grpc: detGRPCRoutes(),
	}
	detAddExtras(&u)
	return u
}

// detEarlier and detLater are creation times around detT0's.
var (
	detEarlier = metav1.NewTime(detT0.Add(-time.Hour))
	detLater   = metav1.NewTime(detT0.Add(time.Second))
)

func detMesh() meshconfig.MeshConfig {
	m := meshconfig.Default()
	m.DefaultLocality = "r0/z0/s0"
	m.ConnectTimeout = meshconfig.Duration(2 * time.Second)
	return m
}

func detNamespaces() []*corev1.Namespace {
	return []*corev1.Namespace{
		detNamespace("alpha", map[string]string{"team": "a"}),
		detNamespace("beta", nil),
		detNamespace("gamma", map[string]string{"team": "g"}),
	}
}

func detNodes() []*corev1.Node {
	return []*corev1.Node{
		node("n1", map[string]string{LabelTopologyRegion: "r1", LabelTopologyZone: "r1a"}),
		node("n2", map[string]string{LabelTopologyRegion: "r1", LabelTopologyZone: "r1b", LabelTopologySubzone: "s1"}),
		node("n3", map[string]string{"kubernetes.io/os": "linux"}), // no topology: the mesh default
		node("n-idle", map[string]string{LabelTopologyRegion: "r2"}),
	}
}

func detServices() []*corev1.Service {
	web := map[string]string{"app": "web"}
	api := map[string]string{"app": "api", "tier": "backend"}
	udp := svcPort("dns", 53, 53)
	udp.Protocol = corev1.ProtocolUDP
	h2c := svcPort("alt", 8080, 8080)
	h2c.AppProtocol = ptr("kubernetes.io/h2c")
	ext := detService("alpha", "ext", "", nil, "", svcPort("http", 80, 80))
	ext.Spec.Type, ext.Spec.ExternalName = corev1.ServiceTypeExternalName, "example.com"
	gammaWeb := detService("gamma", "web", "10.96.3.1", web, "", svcPort("http", 80, "http"))
	gammaWeb.Spec.PublishNotReadyAddresses = true
	return []*corev1.Service{
		detService("alpha", "web", "10.96.1.1", web, "",
			svcPort("http", 80, "http-web"), svcPort("grpc", 9090, 9090), svcPort("tcp-db", 5432, 5432), udp, h2c),
		detService("alpha", "api", "10.96.1.2", api, ".", svcPort("grpc-api", 8080, "grpc"), svcPort("http", 80, 8081)),
		detService("alpha", "legacy", "10.96.1.3", nil, "alpha, beta", svcPort("http", 80, 8080), svcPort("metrics", 9100, 9100)),
		detService("alpha", "db", "None", map[string]string{"app": "db"}, "", svcPort("mongo", 27017, 27017)),
		ext,
		// A hand-written manifest reusing web's cluster IP: its TCP
		// listener and sidecar domains collide with web's.
		detService("alpha", "shadow", "10.96.1.1", web, "gamma", svcPort("http", 80, 8080), svcPort("tcp", 5432, 5432)),
		detService("beta", "web", "10.96.2.1", map[string]string{"app": "web"}, "beta,gamma", svcPort("http", 80, 8080), svcPort("grpc", 9090, 9090)),
		detService("beta", "api", "10.96.2.2", map[string]string{"app": "api"}, "*", svcPort("grpc", 8080, 8080)),
		// Port 80 twice: the first wins.
		detService("beta", "dupports", "10.96.2.3", web, "", svcPort("http", 80, 8080), svcPort("http-second", 80, 8081), svcPort("tcp", 81, 81)),
		gammaWeb,
		detService("gamma", "api", "10.96.3.2", map[string]string{"app": "api"}, "~", svcPort("grpc", 8080, 8080)),
	}
}

func detPods() []*corev1.Pod {
	web := map[string]string{"app": "web"}
	api := map[string]string{"app": "api", "tier": "backend"}
	terminating := detPod("alpha", "web-4", "10.1.1.14", "n-missing", web, true, "http-web", 8080)
	terminating.DeletionTimestamp = &detT0
	succeeded := detPod("alpha", "web-5", "10.1.1.15", "n1", web, true, "http-web", 8080)
	succeeded.Status.Phase = corev1.PodSucceeded
	return []*corev1.Pod{
		detPod("alpha", "web-0", "10.1.1.10", "n1", web, true, "http-web", 8080),
		detPod("alpha", "web-1", "10.1.1.11", "n2", web, false, "http-web", 8080),
		detPod("alpha", "web-2", "10.1.1.12", "n3", web, true), // no named port: not on port 80
		detPod("alpha", "web-3", "", "n1", web, false, "http-web", 8080),
		terminating,
		succeeded,
		// Host-network pods sharing an address: the healthy one is kept.
		detPod("alpha", "web-host-a", "10.0.0.5", "n1", web, true, "http-web", 8080),
		detPod("alpha", "web-host-b", "10.0.0.5", "n2", web, false, "http-web", 8080),
		detPod("alpha", "api-0", "10.1.2.10", "n1", api, true, "grpc", 9000),
		detPod("alpha", "api-1", "10.1.2.11", "n2", map[string]string{"app": "api"}, true, "grpc", 9000),
		detPod("alpha", "api-2", "10.1.2.12", "n2", api, false, "grpc", 9000),
		detPod("alpha", "db-0", "10.1.3.10", "n3", map[string]string{"app": "db"}, true),
		detPod("beta", "web-0", "10.2.1.10", "n1", web, true),
		detPod("beta", "web-1", "10.2.1.11", "n2", web, true),
		detPod("beta", "web-2", "10.2.1.12", "n3", web, false),
		detPod("beta", "api-0", "10.2.2.10", "n2", map[string]string{"app": "api"}, true),
		detPod("gamma", "web-0", "10.3.1.10", "n1", web, false, "http", 8000),
		detPod("gamma", "web-1", "10.3.1.11", "n2", web, true, "http", 8000),
		detPod("gamma", "api-0", "10.3.2.10", "n1", map[string]string{"app": "api"}, true),
	}
}

// detLegacyPorts are the ports of the legacy service's slices.
func detLegacyPorts() []discoveryv1.EndpointPort {
	return []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(8080)), Protocol: ptr(corev1.ProtocolTCP)}, {Name: ptr("metrics"), Port: ptr(int32(9100))}}
}

func detSlices() []*discoveryv1.EndpointSlice {
	legacyPorts := detLegacyPorts()
	udpP := ptr(corev1.ProtocolUDP)
	onNode := func(e discoveryv1.Endpoint, node string) discoveryv1.Endpoint {
		e.NodeName = ptr(node)
		return e
	}
	withPod := func(e discoveryv1.Endpoint, name string) discoveryv1.Endpoint {
		e.TargetRef = &corev1.ObjectReference{Kind: "Pod", Name: name}
		return e
	}
	return []*discoveryv1.EndpointSlice{
		slice("alpha", "legacy-a", "legacy", discoveryv1.AddressTypeIPv4, legacyPorts,
			withPod(onNode(sliceEP(ptr(true), "", "10.1.9.1"), "n1"), "legacy-pod-1"),
			sliceEP(ptr(false), "r1b", "10.1.9.2"),
			sliceEP(nil, "", "10.1.9.3")),
		// Lists 10.1.9.2 again, ready: the ready one is kept.
		slice("alpha", "legacy-b", "legacy", discoveryv1.AddressTypeIPv4,
			[]discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(8080))}, {Name: ptr("metrics"), Port: ptr(int32(9100)), Protocol: udpP}},
			onNode(sliceEP(ptr(true), "", "10.1.9.2"), "n2"),
			onNode(sliceEP(ptr(true), "r9", "10.1.9.4"), "n-missing")),
		slice("alpha", "legacy-fqdn", "legacy", discoveryv1.AddressTypeFQDN, legacyPorts, sliceEP(nil, "", "legacy.example.com")),
		slice("alpha", "orphan", "nope", discoveryv1.AddressTypeIPv4, legacyPorts, sliceEP(nil, "", "10.1.9.9")),
	}
}

// detUserRE matches a regular expression on the x-user header.
func detUserRE() gatewayv1.HTTPRouteMatch {
	return gatewayv1.HTTPRouteMatch{Headers: []gatewayv1.HTTPHeaderMatch{{Name: "x-user", Type: ptr(gatewayv1.HeaderMatchRegularExpression), Value: "a.*"}}}
}

func detHTTPRoutes() []*gatewayv1.HTTPRoute {
	userRE := detUserRE()
	exact, prefix, regex := gatewayv1.PathMatchExact, gatewayv1.PathMatchPathPrefix, gatewayv1.PathMatchRegularExpression
	canary := detPath(prefix, "/api")
	canary.Headers = []gatewayv1.HTTPHeaderMatch{{Name: "X-Canary", Value: "1"}}
	versioned := detPath(regex, "/v[0-9]+/.*")
	versioned.Method = ptr(gatewayv1.HTTPMethodGet)
	versioned.QueryParams = []gatewayv1.HTTPQueryParamMatch{{Name: "q", Value: "1"}}
	crossNS := gatewayv1.HTTPBackendRef{BackendRef: backendRef("web", 80, 1)}
	crossNS.Namespace = ptr(gatewayv1.Namespace("beta"))
	port80 := ptr(int32(80))
	return []*gatewayv1.HTTPRoute{
		detHTTPRoute("alpha", "canary", detT0, detParents(serviceParent("web", nil)),
			gatewayv1.HTTPRouteRule{
				Matches:     []gatewayv1.HTTPRouteMatch{canary},
				BackendRefs: detHTTPBackends(backend("web", 80, 90), backend("api", 80, 10)),
				Timeouts:    &gatewayv1.HTTPRouteTimeouts{Request: d("5s"), BackendRequest: d("1s")},
				Retry:       &gatewayv1.HTTPRouteRetry{Attempts: ptr(2), Codes: []gatewayv1.HTTPRouteRetryStatusCode{503, 502}, Backoff: d("100ms")},
			},
			gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{detPath(exact, "/healthz")}, BackendRefs: detHTTPBackends(backend("web", 80, 1))},
			gatewayv1.HTTPRouteRule{
				Matches:     []gatewayv1.HTTPRouteMatch{versioned, userRE},
				BackendRefs: detHTTPBackends(backend("api", 80, 1)),
				Filters: []gatewayv1.HTTPRouteFilter{
					{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{
						Set: []gatewayv1.HTTPHeader{{Name: "X-Route", Value: "canary"}}, Remove: []string{"x-debug"}}},
					{Type: gatewayv1.HTTPRouteFilterResponseHeaderModifier, ResponseHeaderModifier: &gatewayv1.HTTPHeaderFilter{
						Add: []gatewayv1.HTTPHeader{{Name: "x-served-by", Value: "mesh"}}}},
				},
			}),
		// Three routes of equal precedence created in the same second, one
		// of them from another namespace, and an older one that beats them.
		detHTTPRoute("alpha", "tie-a", detT0, detParents(serviceParent("web", port80)),
			gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{detPath(prefix, "/shop")}, BackendRefs: detHTTPBackends(backend("web", 80, 1))}),
		detHTTPRoute("alpha", "tie-b", detT0, detParents(serviceParent("web", port80)),
			gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{detPath(prefix, "/shop")}, BackendRefs: detHTTPBackends(backend("api", 80, 1))}),
		detHTTPRoute("beta", "tie-c", detT0, detParents(detInNamespace(serviceParent("web", port80), "alpha")),
			gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{detPath(prefix, "/shop")}, BackendRefs: detHTTPBackends(backend("web", 80, 1))}),
		detHTTPRoute("alpha", "older", detEarlier, detParents(serviceParent("web", nil)),
			gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{detPath(prefix, "/shop")}, BackendRefs: detHTTPBackends(backend("web", 9090, 1))}),
		detHTTPRoute("alpha", "broken", detT0, detParents(serviceParent("web", nil)),
			gatewayv1.HTTPRouteRule{BackendRefs: detHTTPBackends(backend("nope", 80, 1), backend("web", 80, 1))}),
		detHTTPRoute("alpha", "crossns", detT0, detParents(serviceParent("web", nil)),
			gatewayv1.HTTPRouteRule{BackendRefs: detHTTPBackends(crossNS)}),
	}
}

// detMoreHTTPRoutes are the routes with several parents or none that binds.
func detMoreHTTPRoutes() []*gatewayv1.HTTPRoute {
	exact, prefix := gatewayv1.PathMatchExact, gatewayv1.PathMatchPathPrefix
	port80 := ptr(int32(80))
	gatewayParent := gatewayv1.ParentReference{Name: "gw"}
	return []*gatewayv1.HTTPRoute{
		// Several parents, among them the same one twice and web both on
		// port 80 and on all ports.
		detHTTPRoute("alpha", "multi", detLater,
			detParents(serviceParent("web", port80), detSectionParent("web", "grpc"), serviceParent("api", nil), serviceParent("web", port80), serviceParent("web", nil)),
			gatewayv1.HTTPRouteRule{BackendRefs: detHTTPBackends(backend("web", 80, 0), backend("web", 9090, 2), backend("api", 80, 1))},
			gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{detUserRE()}, BackendRefs: detHTTPBackends(backend("api", 80, 1))}),
		detHTTPRoute("alpha", "missing-parent", detT0, detParents(serviceParent("nope", nil)),
			gatewayv1.HTTPRouteRule{BackendRefs: detHTTPBackends(backend("web", 80, 1))}),
		detHTTPRoute("alpha", "badport", detT0, detParents(serviceParent("web", ptr(int32(1234)))),
			gatewayv1.HTTPRouteRule{BackendRefs: detHTTPBackends(backend("web", 80, 1))}),
		detHTTPRoute("alpha", "redirect", detT0, detParents(serviceParent("web", nil)),
			gatewayv1.HTTPRouteRule{
				Filters:     []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{}}},
				BackendRefs: detHTTPBackends(backend("web", 80, 1))}),
		detHTTPRoute("alpha", "zero", detT0, detParents(serviceParent("web", port80)),
			gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{detPath(exact, "/down")}, BackendRefs: detHTTPBackends(backend("web", 80, 0))}),
		detHTTPRoute("alpha", "gateway-only", detT0, detParents(gatewayParent),
			gatewayv1.HTTPRouteRule{BackendRefs: detHTTPBackends(backend("web", 80, 1))}),
		detHTTPRoute("alpha", "to-legacy", detT0, detParents(serviceParent("legacy", nil)),
			gatewayv1.HTTPRouteRule{BackendRefs: detHTTPBackends(backend("legacy", 80, 1), backend("web", 80, 1))}),
		detHTTPRoute("beta", "split", detT0, detParents(serviceParent("web", nil)),
			gatewayv1.HTTPRouteRule{BackendRefs: detHTTPBackends(backend("web", 80, 50), backend("dupports", 80, 50))}),
		detHTTPRoute("gamma", "hidden", detT0, detParents(serviceParent("api", nil)),
			gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{detPath(prefix, "/x")}, BackendRefs: detHTTPBackends(backend("web", 80, 1))}),
	}
}

func detGRPCRoutes() []*gatewayv1.GRPCRoute {
	port8080 := ptr(int32(8080))
	tenant := detGRPCMethod("echo.Echo", "Say", false)
	tenant.Headers = []gatewayv1.GRPCHeaderMatch{{Name: "x-tenant", Value: "a"}}
	return []*gatewayv1.GRPCRoute{
		detGRPCRoute("alpha", "g-exact", detT0, detParents(serviceParent("api", port8080)),
			gatewayv1.GRPCRouteRule{Matches: []gatewayv1.GRPCRouteMatch{tenant}, BackendRefs: detGRPCBackends(backendRef("api", 8080, 3), backendRef("web", 9090, 1))}),
		detGRPCRoute("alpha", "g-svc", detT0, detParents(serviceParent("api", nil)),
			gatewayv1.GRPCRouteRule{Matches: []gatewayv1.GRPCRouteMatch{detGRPCMethod("echo.Echo", "", false)}, BackendRefs: detGRPCBackends(backendRef("api", 8080, 1))}),
		detGRPCRoute("alpha", "g-svc-tie", detT0, detParents(serviceParent("api", port8080)),
			gatewayv1.GRPCRouteRule{Matches: []gatewayv1.GRPCRouteMatch{detGRPCMethod("echo.Echo", "", false)}, BackendRefs: detGRPCBackends(backendRef("web", 9090, 1))}),
		detGRPCRoute("alpha", "g-method", detT0, detParents(serviceParent("api", nil)),
			gatewayv1.GRPCRouteRule{Matches: []gatewayv1.GRPCRouteMatch{detGRPCMethod("", "Ping", false)}, BackendRefs: detGRPCBackends(backendRef("api", 8080, 1))}),
		detGRPCRoute("alpha", "g-regex", detLater, detParents(detSectionParent("api", "grpc-api")),
			gatewayv1.GRPCRouteRule{
				Matches:     []gatewayv1.GRPCRouteMatch{detGRPCMethod(`echo\..*`, "", true)},
				BackendRefs: detGRPCBackends(backendRef("api", 8080, 1)),
				Filters: []gatewayv1.GRPCRouteFilter{{Type: gatewayv1.GRPCRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{
					Set: []gatewayv1.HTTPHeader{{Name: "x-via", Value: "regex"}}}}},
			}),
		detGRPCRoute("alpha", "g-broken", detT0, detParents(serviceParent("api", nil)),
			gatewayv1.GRPCRouteRule{BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{Name: "api"}}}}}), // api has two ports
		detGRPCRoute("alpha", "g-web", detT0, detParents(serviceParent("web", ptr(int32(9090)))),
			gatewayv1.GRPCRouteRule{Matches: []gatewayv1.GRPCRouteMatch{detGRPCMethod("grpc.health.v1.Health", "Check", false)}, BackendRefs: detGRPCBackends(backendRef("web", 9090, 1))}),
		detGRPCRoute("beta", "g-api", detT0, detParents(serviceParent("api", nil)),
			gatewayv1.GRPCRouteRule{Matches: []gatewayv1.GRPCRouteMatch{detGRPCMethod("echo.Echo", "", false)}, BackendRefs: detGRPCBackends(backendRef("api", 8080, 1))},
			gatewayv1.GRPCRouteRule{BackendRefs: detGRPCBackends(backendRef("api", 8080, 5), backendRef("web", 9090, 5))}),
	}
}

// detAddExtras sets the objects of u that histories add and delete again.
func detAddExtras(u *detUniverse) {
	web := map[string]string{"app": "web"}
	api := map[string]string{"app": "api", "tier": "backend"}
	port8080 := ptr(int32(8080))
	u.extraNamespaces = []*corev1.Namespace{detNamespace("delta", nil)}
	u.extraNodes = []*corev1.Node{node("n-extra", map[string]string{LabelTopologyRegion: "r3"})}
	u.extraServices = []*corev1.Service{
		detService("alpha", "ghost", "10.96.1.2", web, "gamma", svcPort("http", 80, 8080)),
		detService("beta", "aaa", "10.96.2.1", web, "", svcPort("http", 80, 8080), svcPort("tcp", 81, 81)),
	}
	u.extraPods = []*corev1.Pod{
		detPod("alpha", "web-ghost", "10.1.1.10", "n2", web, false, "http-web", 8080),
		detPod("alpha", "api-9", "10.1.2.99", "n1", api, true, "grpc", 9000),
	}
	u.extraSlices = []*discoveryv1.EndpointSlice{
		slice("alpha", "legacy-c", "legacy", discoveryv1.AddressTypeIPv4, detLegacyPorts(), sliceEP(ptr(false), "", "10.1.9.1", "10.1.9.5")),
	}
	u.extraHTTP = []*gatewayv1.HTTPRoute{
		detHTTPRoute("alpha", "zzz-extra", detT0, detParents(serviceParent("web", nil)),
			gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{detPath(gatewayv1.PathMatchExact, "/healthz")}, BackendRefs: detHTTPBackends(backend("api", 80, 1))}),
	}
	u.extraGRPC = []*gatewayv1.GRPCRoute{
		detGRPCRoute("alpha", "g-extra", detEarlier, detParents(serviceParent("api", port8080)),
			gatewayv1.GRPCRouteRule{Matches: []gatewayv1.GRPCRouteMatch{detGRPCMethod("echo.Echo", "Say", false)}, BackendRefs: detGRPCBackends(backendRef("web", 9090, 1))}),
	}
}

// Variants: a random other content for an object, as an earlier revision
// or a stale relist would carry.

func detVaryNamespace(r *rand.Rand, n *corev1.Namespace) *corev1.Namespace {
	v := n.DeepCopy()
	v.Labels = map[string]string{"rev": fmt.Sprint(r.IntN(100))}
	return v
}

func detVaryNode(r *rand.Rand, n *corev1.Node) *corev1.Node {
	v := n.DeepCopy()
	switch r.IntN(3) {
	case 0:
		v.Labels = nil
	case 1:
		v.Labels = map[string]string{LabelTopologyRegion: "r1", LabelTopologyZone: "r1b"}
	default:
		v.Labels = map[string]string{LabelTopologyRegion: "r" + fmt.Sprint(r.IntN(4)), LabelTopologyZone: "z"}
	}
	return v
}

func detVaryService(r *rand.Rand, s *corev1.Service) *corev1.Service {
	v := s.DeepCopy()
	switch r.IntN(6) {
	case 0:
		if len(v.Spec.Ports) > 1 {
			v.Spec.Ports = v.Spec.Ports[:len(v.Spec.Ports)-1]
		} else {
			v.Spec.Ports = nil
		}
	case 1:
		if v.Spec.Selector != nil {
			v.Spec.Selector = map[string]string{"app": "other"}
		} else {
			v.Spec.Selector = map[string]string{"app": "web"}
		}
	case 2:
		v.Annotations = map[string]string{AnnotationExportTo: []string{".", "*", "gamma", "alpha,beta", "delta"}[r.IntN(5)]}
	case 3:
		// Possibly another service's address.
		v.Spec.ClusterIP = fmt.Sprintf("10.96.%d.%d", 1+r.IntN(3), 1+r.IntN(3))
	case 4:
		v.Spec.Ports = append(slices.Clone(v.Spec.Ports), svcPort("http-extra", 8088, 8088))
		slices.Reverse(v.Spec.Ports)
	default:
		v.Spec.PublishNotReadyAddresses = !v.Spec.PublishNotReadyAddresses
		v.Spec.Type = corev1.ServiceTypeExternalName
	}
	return v
}

func detVaryPod(r *rand.Rand, p *corev1.Pod) *corev1.Pod {
	v := p.DeepCopy()
	switch r.IntN(6) {
	case 0:
		for i := range v.Status.Conditions {
			if v.Status.Conditions[i].Status == corev1.ConditionTrue {
				v.Status.Conditions[i].Status = corev1.ConditionFalse
			} else {
				v.Status.Conditions[i].Status = corev1.ConditionTrue
			}
		}
	case 1:
		// Possibly another pod's address.
		v.Status.PodIP = fmt.Sprintf("10.1.1.%d", 10+r.IntN(4))
	case 2:
		v.Labels = map[string]string{"app": []string{"web", "api", "db"}[r.IntN(3)]}
	case 3:
		v.Spec.NodeName = []string{"", "n1", "n2", "n3", "n-idle"}[r.IntN(5)]
	case 4:
		v.Status.Phase, v.Status.PodIP, v.Status.PodIPs = corev1.PodPending, "", nil
	default:
		v.Spec.Containers = []corev1.Container{{Ports: []corev1.ContainerPort{{Name: "http-web", ContainerPort: 7000}, {Name: "grpc", ContainerPort: 7001}}}}
	}
	return v
}

func detVarySlice(r *rand.Rand, s *discoveryv1.EndpointSlice) *discoveryv1.EndpointSlice {
	v := s.DeepCopy()
	switch r.IntN(3) {
	case 0:
		if len(v.Endpoints) > 0 {
			v.Endpoints = v.Endpoints[1:]
		}
	case 1:
		for i := range v.Endpoints {
			v.Endpoints[i].Conditions.Ready = ptr(r.IntN(2) == 0)
		}
	default:
		v.Ports = []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(7000 + r.IntN(3)))}}
	}
	return v
}

func detVaryHTTPRoute(r *rand.Rand, h *gatewayv1.HTTPRoute) *gatewayv1.HTTPRoute {
	v := h.DeepCopy()
	switch r.IntN(5) {
	case 0:
		slices.Reverse(v.Spec.Rules)
	case 1:
		for i := range v.Spec.Rules {
			for j := range v.Spec.Rules[i].BackendRefs {
				v.Spec.Rules[i].BackendRefs[j].Weight = ptr(int32(r.IntN(5)))
			}
		}
	case 2:
		v.CreationTimestamp = metav1.NewTime(detT0.Add(time.Duration(r.IntN(3)-1) * time.Minute))
	case 3:
		v.Spec.ParentRefs = []gatewayv1.ParentReference{serviceParent([]string{"web", "api", "legacy"}[r.IntN(3)], nil)}
	default:
		v.Spec.Rules = append(v.Spec.Rules, gatewayv1.HTTPRouteRule{
			Matches: []gatewayv1.HTTPRouteMatch{detPath(gatewayv1.PathMatchExact, "/healthz")}, BackendRefs: detHTTPBackends(backend("api", 80, 1))})
	}
	return v
}

func detVaryGRPCRoute(r *rand.Rand, g *gatewayv1.GRPCRoute) *gatewayv1.GRPCRoute {
	v := g.DeepCopy()
	switch r.IntN(4) {
	case 0:
		slices.Reverse(v.Spec.Rules)
		v.Spec.Rules = append(v.Spec.Rules, gatewayv1.GRPCRouteRule{BackendRefs: detGRPCBackends(backendRef("api", 8080, 1))})
	case 1:
		for i := range v.Spec.Rules {
			for j := range v.Spec.Rules[i].BackendRefs {
				v.Spec.Rules[i].BackendRefs[j].Weight = ptr(int32(r.IntN(5)))
			}
		}
	case 2:
		v.CreationTimestamp = metav1.NewTime(detT0.Add(time.Duration(r.IntN(3)-1) * time.Minute))
	default:
		v.Spec.ParentRefs = []gatewayv1.ParentReference{serviceParent([]string{"web", "api"}[r.IntN(2)], ptr(int32(9090)))}
	}
	return v
}

func detVaryMesh(r *rand.Rand, m meshconfig.MeshConfig) meshconfig.MeshConfig {
	switch r.IntN(3) {
	case 0:
		m.DomainSuffix = "example.internal"
	case 1:
		m.ConnectTimeout = meshconfig.Duration(7 * time.Second)
	default:
		m.DefaultLocality = ""
	}
	return m
}
