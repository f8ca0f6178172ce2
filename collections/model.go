package collections

import (
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
	"github.com/meshd/meshd/sources/meshconfig"
)

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

	// PeerAuthentications and AuthorizationPolicies are the policies as
	// meshd applies them, with the problems of each, keyed
	// "namespace/name".
	PeerAuthentications   krt.Collection[PeerAuthn]
	AuthorizationPolicies krt.Collection[AuthzPolicy]
	// ClusterSecurity, per cluster, says whether clients use mTLS and
	// which server identities they accept.
	ClusterSecurity krt.Collection[ClusterSecurity]

	// Clusters: one EDS cluster per service port, "outbound|<port>||<host>",
	// and InvalidBackendCluster while a route sends a share of its traffic
	// to a backend that does not resolve.
	Clusters krt.Collection[Resource[*clusterv3.Cluster]]
	// ClusterLoadAssignments: one per cluster, of the same name; the
	// invalid backend cluster's has no endpoints.
	ClusterLoadAssignments krt.Collection[Resource[*endpointv3.ClusterLoadAssignment]]
	// RouteConfigurations: GRPCRouteConfigurations and
	// SidecarRouteConfigurations together.
	RouteConfigurations krt.Collection[Resource[*routev3.RouteConfiguration]]
	// Listeners: GRPCListeners and SidecarListeners together.
	Listeners krt.Collection[Resource[*listenerv3.Listener]]

	// ServerListeners: one per workload address and HTTP-family port,
	// for gRPC xDS servers: ServerListenerName(ip, port); only those
	// asked for with WithServerListenerDemand.
	ServerListeners krt.Collection[Resource[*listenerv3.Listener]]
	// LegacyServerListeners: the VariantGRPCLegacy form of those
	// ServerListeners that older gRPC C-core servers would reject (an
	// RBAC header matcher's string_match), to serve as that variant.
	LegacyServerListeners krt.Collection[Resource[*listenerv3.Listener]]
	// GRPCListeners: one ApiListener per service port, "<host>:<port>".
	GRPCListeners krt.Collection[Resource[*listenerv3.Listener]]
	// GRPCRouteConfigurations: one per service port, "<host>:<port>".
	GRPCRouteConfigurations krt.Collection[Resource[*routev3.RouteConfiguration]]
	// LegacyGRPCRouteConfigurations: the VariantGRPCLegacy form of those
	// GRPCRouteConfigurations that older gRPC C-core clients would reject,
	// to serve as that variant (xds.AsVariant).
	LegacyGRPCRouteConfigurations krt.Collection[Resource[*routev3.RouteConfiguration]]
	// SidecarListeners: one outbound listener per HTTP port number,
	// "0.0.0.0_<port>", and one per non-HTTP service port with a cluster
	// IP, "<clusterIP>_<port>", proxying TCP to the port's cluster. A
	// service with no cluster IP (unset, as in folder manifests; not
	// "None", which is headless and gets none) has its non-HTTP ports
	// proxied by "0.0.0.0_<port>" where no other service claims the port.
	SidecarListeners krt.Collection[Resource[*listenerv3.Listener]]
	// SidecarRouteConfigurations: one per HTTP port number, "<port>", with
	// a virtual host per service on that port.
	SidecarRouteConfigurations krt.Collection[Resource[*routev3.RouteConfiguration]]

	graph    *krt.Graph
	applying applyingPolicies
}

// WorkloadSecurity returns the security of the workload of key (keyed as
// Workloads): its SPIFFE ID, the mTLS mode of its ports and the
// authorization rules that apply to it, as of the last committed
// transaction; ok is false when there is no such workload. It is derived
// on each call, not held: only the server listeners asked for need it
// (ClusterSecurity reads what it needs per service). It must not be
// called from inside a transformation or a transaction (krt.Graph.Read).
func (m *Model) WorkloadSecurity(key string) (sec WorkloadSecurity, ok bool) {
	m.graph.Read(func(s *krt.Snapshot) {
		var w Workload
		if w, ok = m.Workloads.At(s).Get(key); ok {
			sec = m.applying.securityAt(s, w)
		}
	})
	return sec, ok
}

// Option configures Build.
type Option func(*options)

type options struct {
	sidecar     bool
	views       bool
	clusterName string
	// serverDemand, when set, holds the server listener names asked for.
	serverDemand krt.Collection[string]
}

// WithClusterName names the local cluster, the one whose objects carry no
// sources.AnnotationCluster: its workloads' and endpoints' Locality.Cluster
// is name, so in xDS their sub-zone is "subzone@name" as a remote
// cluster's is, and preferLocal (meshconfig.PreferLocal) prefers the
// localities of cluster name. It must differ from every remote cluster's
// name. Default: "", the local cluster is unnamed and its localities are
// plain.
func WithClusterName(name string) Option { return func(o *options) { o.clusterName = name } }

// WithServerListenerDemand makes Build derive the server listeners of
// the names in demand only, rather than of every workload address and
// port: demand holds the Listener names that gRPC xDS servers ask for
// (xds.Demand.Names, of the names with ServerListenerNamePrefix), each
// item keyed by itself. A name that is no server listener, or whose
// address no workload serving its port has, has none. Default: every
// server listener is built, whether asked for or not.
func WithServerListenerDemand(demand krt.Collection[string]) Option {
	return func(o *options) { o.serverDemand = demand }
}

// WithSidecarResources sets whether Build derives the sidecar listeners and
// route configurations. Default: true. When false, the Sidecar fields of
// the Model are nil.
func WithSidecarResources(on bool) Option { return func(o *options) { o.sidecar = on } }

// WithNamespaceViews sets whether the sidecar HTTP listeners and route
// configurations, which gather every service of a port, come in one
// variant per namespace that may see a service others may not (exportTo):
// "0.0.0.0_<port>~<ns>" and "<port>~<ns>", visible to that namespace
// only, beside the plain ones, which every other namespace sees. Turn it on
// when the xDS server isolates namespaces, and only then: a proxy that saw
// every variant would get several listeners on one port. Default: false.
func WithNamespaceViews(on bool) Option { return func(o *options) { o.views = on } }

// Build derives the model from in, adding its collections to g. A nil
// field of in reads as an empty input (sources.Inputs.Complete); the
// model reads every field but ConfigMaps, from which a mesh config source
// derives MeshConfig (see meshconfig.FromConfigMap). Build computes the
// initial state before returning and starts no goroutines.
func Build(g *krt.Graph, in sources.Inputs, opts ...Option) *Model {
	o := options{sidecar: true}
	for _, opt := range opts {
		opt(&o)
	}
	in = in.Complete(g, "empty")
	m := &Model{graph: g}
	m.MeshConfig = newMesh(g, in.MeshConfig)
	m.Services = newServiceInfos(g, in.Services, m.MeshConfig)
	m.Workloads = newWorkloads(g, in.Pods, in.Nodes, m.Services, m.MeshConfig, o.clusterName)
	m.Endpoints = newEndpoints(g, m.Services, m.Workloads, in.EndpointSlices, in.Nodes, in.StaleClusters, o.clusterName)

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

	m.buildSecurity(g, in, o.serverDemand)
	invalidClusters, invalidCLAs := newInvalidBackend(g, m.RouteBindings)
	m.Clusters = krt.Join(g, []krt.Collection[Resource[*clusterv3.Cluster]]{
		newClusters(g, m.Services, m.MeshConfig, m.ClusterSecurity), invalidClusters,
	}, krt.WithName("AllClusters"))
	m.ClusterLoadAssignments = krt.Join(g, []krt.Collection[Resource[*endpointv3.ClusterLoadAssignment]]{
		newCLAs(g, m.Endpoints, m.MeshConfig, o.clusterName), invalidCLAs,
	}, krt.WithName("AllClusterLoadAssignments"))
	m.GRPCRouteConfigurations = krt.NewCollection(g, m.PortRoutes, func(_ krt.HandlerContext, p PortRoutes) *Resource[*routev3.RouteConfiguration] {
		r := newResource(p.ListenerName(), buildGRPCRouteConfig(p)).exported(p.ExportTo)
		return &r
	}, krt.WithName("GRPCRouteConfigurations"))
	m.GRPCListeners = krt.NewCollection(g, m.PortRoutes, func(_ krt.HandlerContext, p PortRoutes) *Resource[*listenerv3.Listener] {
		r := newResource(p.ListenerName(), buildGRPCListener(p.ListenerName())).exported(p.ExportTo)
		return &r
	}, krt.WithName("GRPCListeners"))
	m.LegacyGRPCRouteConfigurations = newLegacyGRPCRoutes(g, m.PortRoutes)
	m.LegacyServerListeners = newLegacyServerListeners(g, m.ServerListeners)
	routeConfigs := []krt.Collection[Resource[*routev3.RouteConfiguration]]{m.GRPCRouteConfigurations}
	listeners := []krt.Collection[Resource[*listenerv3.Listener]]{m.GRPCListeners, m.ServerListeners}
	if o.sidecar {
		m.SidecarRouteConfigurations, m.SidecarListeners = newSidecar(g, m.Services, m.PortRoutes, o.views)
		routeConfigs = append(routeConfigs, m.SidecarRouteConfigurations)
		listeners = append(listeners, m.SidecarListeners)
	}
	m.RouteConfigurations = krt.Join(g, routeConfigs, krt.WithName("RouteConfigurations"))
	m.Listeners = krt.Join(g, listeners, krt.WithName("Listeners"))
	return m
}

// buildSecurity derives the policies, identities and server listeners
// from in, which Build has completed; only those named in demand, when
// it is not nil.
func (m *Model) buildSecurity(g *krt.Graph, in sources.Inputs, demand krt.Collection[string]) {
	m.PeerAuthentications = newPeerAuthns(g, in.PeerAuthentications, m.MeshConfig)
	m.AuthorizationPolicies = newAuthzPolicies(g, in.AuthorizationPolicies, m.MeshConfig)
	m.applying = newApplyingPolicies(g, m.MeshConfig, m.PeerAuthentications, m.AuthorizationPolicies)
	m.ClusterSecurity = newClusterSecurity(g, m.Endpoints, m.Workloads, m.applying)
	if demand != nil {
		m.ServerListeners = newDemandedServerListeners(g, demand, m.Workloads, m.Services, m.applying)
		return
	}
	m.ServerListeners = newServerListeners(g, m.Workloads, m.Services, m.applying)
}
