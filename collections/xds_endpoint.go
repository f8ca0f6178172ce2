package collections

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources/meshconfig"
)

func socketAddress(ip string, port uint32) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Protocol:      corev3.SocketAddress_TCP,
		Address:       ip,
		PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port},
	}}}
}

// newCLAs derives the assignments of endpoints; clusterName is the local
// cluster's (WithClusterName).
func newCLAs(g *krt.Graph, endpoints krt.Collection[ServiceEndpoints], mesh krt.Collection[meshconfig.MeshConfig], clusterName string) krt.Collection[Resource[*endpointv3.ClusterLoadAssignment]] {
	// Only the cluster traffic policy matters here: other mesh config
	// changes recompute no assignment.
	traffic := krt.NewSingleton(g, func(ctx krt.HandlerContext) *clusterTraffic {
		return &clusterTraffic{preferLocal: fetchMesh(ctx, mesh).ClusterTraffic == meshconfig.PreferLocal, local: clusterName}
	}, krt.WithName("ClusterTraffic"))
	return krt.NewCollection(g, endpoints, func(ctx krt.HandlerContext, e ServiceEndpoints) *Resource[*endpointv3.ClusterLoadAssignment] {
		t, _ := krt.FetchOne(ctx, traffic)
		r := Resource[*endpointv3.ClusterLoadAssignment]{Name: e.Cluster, Packed: packCLA(e, t)}.exported(e.ExportTo)
		return &r
	}, krt.WithName("ClusterLoadAssignments"))
}

// clusterTraffic is the mesh config's ClusterTraffic, as a singleton, with
// the name of the local cluster it prefers ("" when unnamed).
type clusterTraffic struct {
	preferLocal bool
	local       string
}
