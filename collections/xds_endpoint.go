package collections

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshd/meshd/krt"
)

// buildCLA returns the ClusterLoadAssignment of a service port. Endpoints
// are grouped by locality, each locality listed once (gRPC clients reject
// duplicates) with a weight equal to its number of endpoints (they ignore
// a locality of weight 0). Not-ready endpoints are listed as UNHEALTHY.
func buildCLA(e ServiceEndpoints) *endpointv3.ClusterLoadAssignment {
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: e.Cluster}
	var cur *endpointv3.LocalityLbEndpoints
	var curLoc Locality
	for _, ep := range e.Endpoints {
		if cur == nil || ep.Locality != curLoc {
			curLoc = ep.Locality
			cur = &endpointv3.LocalityLbEndpoints{
				Locality: &corev3.Locality{Region: curLoc.Region, Zone: curLoc.Zone, SubZone: curLoc.SubZone},
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

func socketAddress(ip string, port uint32) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Protocol:      corev3.SocketAddress_TCP,
		Address:       ip,
		PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port},
	}}}
}

func newCLAs(g *krt.Graph, endpoints krt.Collection[ServiceEndpoints]) krt.Collection[Resource[*endpointv3.ClusterLoadAssignment]] {
	return krt.NewCollection(g, endpoints, func(ctx krt.HandlerContext, e ServiceEndpoints) *Resource[*endpointv3.ClusterLoadAssignment] {
		r := newResource(e.Cluster, buildCLA(e)).exported(e.ExportTo)
		return &r
	}, krt.WithName("ClusterLoadAssignments"))
}
