// Package collections derives the mesh model, and the xDS resources that
// describe it, from Kubernetes objects, incrementally with krt.
//
// Build takes the input collections (sources.Inputs: Services, Pods,
// Namespaces, EndpointSlices, Nodes, Gateway API HTTPRoutes and GRPCRoutes,
// Istio PeerAuthentications and AuthorizationPolicies, and the mesh config
// singleton; not ConfigMaps, which only a mesh config source reads) and
// adds to the graph the derived collections of the Model:
//
//	Services     ServiceInfo         "ns/name"   hostname, ports, protocols
//	Workloads    Workload            "ns/name"   pod IP, readiness, locality, selecting services
//	Endpoints    ServiceEndpoints    cluster     endpoints of one service port
//	RouteStatus  RouteStatus         "Kind/ns/name"  conditions of each route
//	RouteBindings, PortRoutes                    accepted routes, per service port
//
//	PeerAuthentications, AuthorizationPolicies  the security policies as applied
//	WorkloadSecurity                            per workload: SPIFFE ID, mTLS modes, RBAC
//	ClusterSecurity                             per cluster: mTLS and accepted SANs
//
// and the xDS resources, each item a Resource holding a proto:
//
//	Clusters                 outbound|<port>||<host>   EDS over ADS
//	ClusterLoadAssignments   outbound|<port>||<host>   by locality; not-ready as UNHEALTHY
//	Listeners                <host>:<port>             gRPC ApiListener (HCM, RDS over ADS)
//	                         grpc/server?xds.resource.listening_address=<ip>:<port>  gRPC xDS server (mTLS, RBAC)
//	                         0.0.0.0_<port>            sidecar outbound listener, HTTP ports
//	                         <clusterIP>_<port>        sidecar outbound listener, TCP ports (tcp_proxy)
//	                         0.0.0.0_<port>            the same for a service with no cluster IP, on a port no other claims
//	RouteConfigurations      <host>:<port>             gRPC: one virtual host
//	                         <port>                    sidecar: a virtual host per service
//
// # Serving the resources
//
// The xDS server serves, per type URL, one collection and a function giving
// each item's name and message; Resource.Serialized is that function, which
// hands the server the bytes the model holds, so that they exist once:
//
//	m := collections.Build(g, in)
//	srv := xds.New(g, []xds.Source{
//		xds.NewPackedSource(xds.ClusterType, m.Clusters, collections.Resource[*clusterv3.Cluster].Serialized),
//		xds.NewPackedSource(xds.EndpointType, m.ClusterLoadAssignments, collections.Resource[*endpointv3.ClusterLoadAssignment].Serialized),
//		xds.NewPackedSource(xds.ListenerType, m.Listeners, collections.Resource[*listenerv3.Listener].Serialized,
//			xds.WithNamedOnly(collections.Resource[*listenerv3.Listener].IsNamedOnly)),
//		xds.NewPackedSource(xds.RouteType, m.RouteConfigurations, collections.Resource[*routev3.RouteConfiguration].Serialized),
//	})
//
// A gRPC client dialing xds:///<svc>.<ns>.svc.<domain>:<port> needs
// nothing else: it asks for the listener of that name, which names the
// route configuration of the same name, whose routes name clusters of this
// model, whose load assignments share their names. The server listeners
// are NamedOnly: only the gRPC xDS server of that address asks for one,
// and a wildcard subscriber is not sent them (xds.WithNamedOnly). With
// WithServerListenerDemand, fed by an xds.Demand, the model builds only
// those asked for.
//
// # Visibility
//
// The Service annotation networking.istio.io/exportTo (AnnotationExportTo: "*",
// "." or namespaces, comma-separated; default "*") limits the namespaces whose
// proxies may see the service. Resource.VisibleTo carries it on the service's
// clusters, load assignments, gRPC listeners and route configurations and sidecar
// TCP listeners, for the xDS server to enforce (xds.WithVisibility). The sidecar
// HTTP listeners and route configurations gather every service of a port; with
// WithNamespaceViews each namespace that may see a service others may not gets
// its own variant of them ("0.0.0.0_<port>~<ns>", "<port>~<ns>"), and the plain
// ones (Resource.HiddenFrom those namespaces) hold only the services exported to
// all — so no sidecar learns even the routes of a service not exported to it.
//
// # Routes
//
// HTTPRoutes and GRPCRoutes attach to a Service (GAMMA) through a parent
// reference of group "" (or "core") and kind Service, optionally
// restricted to a port (port or sectionName). Matches, weighted backends,
// timeouts, retries and header modifiers are translated; other filters
// make the route unsupported. A route that is not accepted or whose
// backends do not all resolve is skipped for that parent, and the reason
// is recorded in RouteStatus; the service then takes its default route to
// its own cluster. Routes are ordered by Gateway API precedence across
// every route attached to the same service port.
//
// # Inputs
//
// Inputs are read through krt filters, so each must be created with the
// accessors the sources use (sources.CollectionOptions, as
// sources.NewStaticInputs does); a nil field reads as an empty input: keys "namespace/name" ("name" for Nodes),
// namespaces and labels from the objects, equality that ignores unchanged
// objects. Services need no selector accessor: the model selects through
// its own ServiceInfo. Namespaces are accepted for namespace-level policy
// and are not read yet.
//
// # Limits
//
// Only HTTP-family ports (http, http2, grpc, grpc-web) are routed by
// Gateway API routes in sidecars; other ports are proxied as TCP to their
// own cluster, and only when the service has a cluster IP. Route filters other than header modifiers (redirect, rewrite,
// mirror, CORS, external auth, extension refs), cross-namespace backends
// (which need ReferenceGrants) and Gateway parents are not supported; the
// first two are reported in RouteStatus.
//
// # Security
//
// A workload's identity is the SPIFFE ID of its service account in the
// mesh config's trust domain. PeerAuthentications decide each workload
// port's mTLS mode and AuthorizationPolicies its RBAC; both are served in
// the workload's server listeners, and a cluster whose endpoints require
// mTLS gets a TLS transport socket naming their identities. TLS contexts
// take certificates from the bootstrap's certificate provider instance
// CertProviderInstance. What of the Istio APIs is supported, and how the
// rest is applied fail-closed, is in docs/security.md.
//
// # Incrementality
//
// Each output reads only what it needs: a pod change recomputes that pod's
// workload, the endpoints of the services selecting it and their load
// assignments; clusters, listeners and route configurations do not read
// workloads or endpoints, so they are left alone. A service change
// recomputes that service's outputs, and the sidecar route configuration
// of its ports. A policy recomputes the WorkloadSecurity, and so the
// server listeners, of the workloads it applies to only; an authorization
// policy recomputes no cluster, which reads only the identities and mTLS
// modes of its endpoints' workloads (krt.PartialFetch).
package collections
