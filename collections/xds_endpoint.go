package collections

import (
	"slices"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources/meshconfig"
)

// buildCLA returns the ClusterLoadAssignment of a service port. Endpoints
// are grouped by locality, each locality listed once (gRPC clients reject
// duplicates) with a weight equal to its number of endpoints (they ignore
// a locality of weight 0). Not-ready endpoints are listed as UNHEALTHY.
// With t.preferLocal, the local cluster's localities have priority 0 and
// the remote clusters' priority 1, or 0 when the local cluster has none
// (xDS priorities start at 0 with no gap). An endpoint's Stale flag
// changes nothing here: a remote's last known endpoints serve as they
// were until they leave the model.
func buildCLA(e ServiceEndpoints, t clusterTraffic) *endpointv3.ClusterLoadAssignment {
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: e.Cluster}
	remotePriority := uint32(0)
	if t.preferLocal && slices.ContainsFunc(e.Endpoints, func(ep Endpoint) bool { return ep.Locality.Cluster == t.local }) {
		remotePriority = 1
	}
	var cur *endpointv3.LocalityLbEndpoints
	var curLoc Locality
	for _, ep := range e.Endpoints {
		if cur == nil || ep.Locality != curLoc {
			curLoc = ep.Locality
			cur = &endpointv3.LocalityLbEndpoints{Locality: xdsLocality(curLoc)}
			if curLoc.Cluster != t.local {
				cur.Priority = remotePriority
			}
			cla.Endpoints = append(cla.Endpoints, cur)
		}
		health := corev3.HealthStatus_HEALTHY
		if !ep.Healthy {
			health = corev3.HealthStatus_UNHEALTHY
		}
		cur.LbEndpoints = append(cur.LbEndpoints, &endpointv3.LbEndpoint{
			HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
				Address: socketAddress(ep.IP, uint32(ep.Port)),
			}},
			HealthStatus:        health,
			LoadBalancingWeight: wrapperspb.UInt32(1),
		})
	}
	for _, l := range cla.Endpoints {
		l.LoadBalancingWeight = wrapperspb.UInt32(uint32(len(l.LbEndpoints)))
	}
	return cla
}

// xdsLocality is l as xDS has it. xDS localities have no cluster, so a
// named cluster's name is appended to the sub-zone ("subzone@cluster"):
// two clusters' endpoints in one zone stay two localities.
func xdsLocality(l Locality) *corev3.Locality {
	sub := l.SubZone
	if l.Cluster != "" {
		sub += "@" + l.Cluster
	}
	return &corev3.Locality{Region: l.Region, Zone: l.Zone, SubZone: sub}
}

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
		r := newResource(e.Cluster, buildCLA(e, t)).exported(e.ExportTo)
		return &r
	}, krt.WithName("ClusterLoadAssignments"))
}

// clusterTraffic is the mesh config's ClusterTraffic, as a singleton, with
// the name of the local cluster it prefers ("" when unnamed).
type clusterTraffic struct {
	preferLocal bool
	local       string
}
