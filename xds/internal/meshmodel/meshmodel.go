// Package meshmodel wires static Kubernetes inputs through the mesh model
// into the four xDS sources (the server listeners served by name only,
// and built only while a gRPC server asks for them) and the clusters
// gRPC clients are sent (collections.ClientVariant):
// the pipeline that the xDS benchmark, the load test and the end-to-end
// test all drive. (The binary wires its own, with real sources and
// optional namespace visibility.)
package meshmodel

import (
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
	"github.com/meshd/meshd/xds"
)

// Mesh is a mesh model fed by static, synced inputs.
type Mesh struct {
	Inputs  sources.StaticInputs
	Model   *collections.Model
	Sources []xds.Source // CDS, EDS, LDS, RDS, gRPC clients' CDS
}

// New builds the model in g over static inputs whose collections are named
// with prefix, and the xDS sources over its outputs. The mesh config is
// empty, so the model uses meshconfig.Default.
func New(g *krt.Graph, prefix string, opts ...collections.Option) Mesh {
	in := sources.NewStaticInputs(g, prefix)
	in.MarkSynced()
	demand := xds.NewDemand(g, prefix+"/server-listener-demand", isServerListener)
	m := collections.Build(g, in.Inputs(), append([]collections.Option{collections.WithServerListenerDemand(demand.Names())}, opts...)...)
	return Mesh{Inputs: in, Model: m, Sources: []xds.Source{
		xds.NewPackedSource(xds.ClusterType, m.Clusters, collections.Resource[*clusterv3.Cluster].Serialized),
		xds.NewPackedSource(xds.EndpointType, m.ClusterLoadAssignments, collections.Resource[*endpointv3.ClusterLoadAssignment].Serialized),
		xds.NewPackedSource(xds.ListenerType, m.Listeners, collections.Resource[*listenerv3.Listener].Serialized,
			xds.WithNamedOnly(collections.Resource[*listenerv3.Listener].IsNamedOnly),
			xds.WithDemand[collections.Resource[*listenerv3.Listener]](demand)),
		xds.NewPackedSource(xds.RouteType, m.RouteConfigurations, collections.Resource[*routev3.RouteConfiguration].Serialized),
		xds.NewPackedSource(xds.ClusterType, m.Clusters, collections.GRPCClusterForm,
			xds.AsVariant[collections.Resource[*clusterv3.Cluster]](collections.VariantGRPC, collections.VariantGRPCLegacy)),
	}}
}

// isServerListener reports whether a Listener name is one a gRPC xDS
// server asks for.
func isServerListener(name string) bool {
	return strings.HasPrefix(name, collections.ServerListenerNamePrefix)
}
