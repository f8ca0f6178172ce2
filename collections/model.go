package collections

import (
	"slices"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources/meshconfig"
)

// Inputs are the collections the model is derived from. Kubernetes objects
// are keyed "namespace/name" (cluster-scoped Nodes "name" or "/name");
// MeshConfig holds at most one item. Every field must be set; use an empty
// krt.NewStatic for an input that has no source.
type Inputs struct {
	Services       krt.Collection[*corev1.Service]
	Pods           krt.Collection[*corev1.Pod]
	Namespaces     krt.Collection[*corev1.Namespace]
	EndpointSlices krt.Collection[*discoveryv1.EndpointSlice]
	Nodes          krt.Collection[*corev1.Node]
	HTTPRoutes     krt.Collection[*gatewayv1.HTTPRoute]
	GRPCRoutes     krt.Collection[*gatewayv1.GRPCRoute]
	MeshConfig     krt.Collection[meshconfig.MeshConfig]
}

// Model holds the derived collections. The first group is the mesh's own
// view, for introspection and for further derivations; the second holds
// the xDS resources, ready to serve.
type Model struct {
	// MeshConfig is the effective mesh config: the input's, or
	// meshconfig.Default when the input is empty.
	MeshConfig krt.Singleton[meshconfig.MeshConfig]
	// Services, keyed "namespace/name".
	Services krt.Collection[ServiceInfo]
	// Workloads, one per non-terminated pod, keyed "namespace/name".
	Workloads krt.Collection[Workload]
	// Endpoints, one per service port, keyed by cluster name.
	Endpoints krt.Collection[ServiceEndpoints]
	// RouteBindings are the accepted Gateway API routes, one per route and
	// parent service, keyed by RouteBinding.ResourceName.
	RouteBindings krt.Collection[RouteBinding]
	// RouteStatus holds the conditions of every HTTPRoute and GRPCRoute
	// with a Service parent, keyed "Kind/namespace/name".
	RouteStatus krt.Collection[RouteStatus]
	// PortRoutes, one per service port, keyed by cluster name.
	PortRoutes krt.Collection[PortRoutes]

	// Clusters: one EDS cluster per service port, "outbound|<port>||<host>".
	Clusters krt.Collection[Resource[*clusterv3.Cluster]]
	// ClusterLoadAssignments: one per cluster, of the same name.
	ClusterLoadAssignments krt.Collection[Resource[*endpointv3.ClusterLoadAssignment]]
	// RouteConfigurations: GRPCRouteConfigurations and
	// SidecarRouteConfigurations together.
	RouteConfigurations krt.Collection[Resource[*routev3.RouteConfiguration]]
	// Listeners: GRPCListeners and SidecarListeners together.
	Listeners krt.Collection[Resource[*listenerv3.Listener]]

	// GRPCListeners: one ApiListener per service port, "<host>:<port>".
	GRPCListeners krt.Collection[Resource[*listenerv3.Listener]]
	// GRPCRouteConfigurations: one per service port, "<host>:<port>".
	GRPCRouteConfigurations krt.Collection[Resource[*routev3.RouteConfiguration]]
	// SidecarListeners: one outbound listener per HTTP port number,
	// "0.0.0.0_<port>", and one per non-HTTP service port with a cluster
	// IP, "<clusterIP>_<port>", proxying TCP to the port's cluster.
	SidecarListeners krt.Collection[Resource[*listenerv3.Listener]]
	// SidecarRouteConfigurations: one per HTTP port number, "<port>", with
	// a virtual host per service on that port.
	SidecarRouteConfigurations krt.Collection[Resource[*routev3.RouteConfiguration]]
}

// Option configures Build.
type Option func(*options)

type options struct {
	sidecar bool
}

// WithSidecarResources sets whether Build derives the sidecar listeners and
// route configurations. Default: true. When false, the Sidecar fields of
// the Model are nil.
func WithSidecarResources(on bool) Option { return func(o *options) { o.sidecar = on } }

// Build derives the model from in, adding its collections to g. It
// computes the initial state before returning and starts no goroutines.
func Build(g *krt.Graph, in Inputs, opts ...Option) *Model {
	o := options{sidecar: true}
	for _, opt := range opts {
		opt(&o)
	}
	m := &Model{}
	m.MeshConfig = newMesh(g, in.MeshConfig)
	m.Services = newServiceInfos(g, in.Services, m.MeshConfig)
	m.Workloads = newWorkloads(g, in.Pods, in.Nodes, m.Services, m.MeshConfig)
	m.Endpoints = newEndpoints(g, m.Services, m.Workloads, in.EndpointSlices, in.Nodes)

	results := krt.Join(g, []krt.Collection[routeResult]{
		newHTTPRouteResults(g, in.HTTPRoutes, m.Services),
		newGRPCRouteResults(g, in.GRPCRoutes, m.Services),
	}, krt.WithName("RouteResults"))
	m.RouteStatus = krt.NewCollection(g, results, func(_ krt.HandlerContext, r routeResult) *RouteStatus {
		if len(r.Status.Parents) == 0 {
			return nil
		}
		return &r.Status
	}, krt.WithName("RouteStatus"))
	m.RouteBindings = krt.NewManyCollection(g, results, func(_ krt.HandlerContext, r routeResult) []RouteBinding {
		return r.Bindings
	}, krt.WithName("RouteBindings"))
	byService := krt.NewIndex(m.RouteBindings, "by-service", func(b RouteBinding) []string { return []string{b.Service} })
	m.PortRoutes = newPortRoutes(g, m.Services, m.RouteBindings, byService)

	m.Clusters = newClusters(g, m.Services, m.MeshConfig)
	m.ClusterLoadAssignments = newCLAs(g, m.Endpoints)
	m.GRPCRouteConfigurations = krt.NewCollection(g, m.PortRoutes, func(_ krt.HandlerContext, p PortRoutes) *Resource[*routev3.RouteConfiguration] {
		r := newResource(p.ListenerName(), buildGRPCRouteConfig(p)).exported(p.ExportTo)
		return &r
	}, krt.WithName("GRPCRouteConfigurations"))
	m.GRPCListeners = krt.NewCollection(g, m.PortRoutes, func(_ krt.HandlerContext, p PortRoutes) *Resource[*listenerv3.Listener] {
		r := newResource(p.ListenerName(), buildGRPCListener(p.ListenerName())).exported(p.ExportTo)
		return &r
	}, krt.WithName("GRPCListeners"))
	routeConfigs := []krt.Collection[Resource[*routev3.RouteConfiguration]]{m.GRPCRouteConfigurations}
	listeners := []krt.Collection[Resource[*listenerv3.Listener]]{m.GRPCListeners}
	if o.sidecar {
		m.SidecarRouteConfigurations, m.SidecarListeners = newSidecar(g, m.Services, m.PortRoutes)
		routeConfigs = append(routeConfigs, m.SidecarRouteConfigurations)
		listeners = append(listeners, m.SidecarListeners)
	}
	m.RouteConfigurations = krt.Join(g, routeConfigs, krt.WithName("RouteConfigurations"))
	m.Listeners = krt.Join(g, listeners, krt.WithName("Listeners"))
	return m
}

// portSet is the set of port numbers served by HTTP services.
type portSet struct{ Ports []int32 }

// sidecarPort is one port number with a sidecar listener.
type sidecarPort struct{ Port int32 }

func (p sidecarPort) ResourceName() string { return itoa(p.Port) }

// newSidecar derives the sidecar route configurations and listeners: one
// of each per port number that some HTTP service listens on.
func newSidecar(g *krt.Graph, services krt.Collection[ServiceInfo], portRoutes krt.Collection[PortRoutes]) (
	krt.Collection[Resource[*routev3.RouteConfiguration]], krt.Collection[Resource[*listenerv3.Listener]]) {
	// The set of ports changes only when services do, never with
	// endpoints, so the per-port outputs below are recomputed only when a
	// service on their port changes.
	set := krt.NewSingleton(g, func(ctx krt.HandlerContext) *portSet {
		var ports []int32
		for _, s := range krt.Fetch(ctx, services) {
			for _, p := range s.Ports {
				if p.Protocol.IsHTTP() {
					ports = append(ports, p.Port)
				}
			}
		}
		slices.Sort(ports)
		return &portSet{Ports: slices.Compact(ports)}
	}, krt.WithName("SidecarPortSet"))
	ports := krt.NewManyCollection(g, set, func(_ krt.HandlerContext, s portSet) []sidecarPort {
		out := make([]sidecarPort, len(s.Ports))
		for i, p := range s.Ports {
			out[i] = sidecarPort{Port: p}
		}
		return out
	}, krt.WithName("SidecarPorts"))
	byPort := krt.NewIndex(portRoutes, "http-by-port", func(p PortRoutes) []string {
		if !p.Protocol.IsHTTP() {
			return nil
		}
		return []string{itoa(p.Port)}
	})
	rcs := krt.NewCollection(g, ports, func(ctx krt.HandlerContext, p sidecarPort) *Resource[*routev3.RouteConfiguration] {
		r := newResource(itoa(p.Port), buildSidecarRouteConfig(p.Port, krt.Fetch(ctx, portRoutes, krt.FilterIndex(byPort, itoa(p.Port)))))
		return &r
	}, krt.WithName("SidecarRouteConfigurations"))
	httpLis := krt.NewCollection(g, ports, func(_ krt.HandlerContext, p sidecarPort) *Resource[*listenerv3.Listener] {
		r := newResource(SidecarListenerName(p.Port), buildSidecarListener(p.Port))
		return &r
	}, krt.WithName("SidecarHTTPListeners"))
	tcpLis := krt.NewManyCollection(g, services, func(_ krt.HandlerContext, s ServiceInfo) []Resource[*listenerv3.Listener] {
		if s.ClusterIP == "" {
			// A headless service's clients connect to pod IPs directly.
			return nil
		}
		var out []Resource[*listenerv3.Listener]
		for _, p := range s.Ports {
			if p.Protocol.IsHTTP() {
				continue
			}
			name := s.ClusterIP + "_" + itoa(p.Port)
			out = append(out, newResource(name, buildSidecarTCPListener(name, s.ClusterIP, p.Port, ClusterName(p.Port, s.Hostname))).exported(s.ExportTo))
		}
		return out
	}, krt.WithName("SidecarTCPListeners"))
	return rcs, krt.Join(g, []krt.Collection[Resource[*listenerv3.Listener]]{httpLis, tcpLis}, krt.WithName("SidecarListeners"))
}
