package collections

import (
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"

	"github.com/meshd/meshd/krt"
)

// The traffic share of a backendRef that resolves to nothing must fail
// while the rule's other backends keep theirs (Gateway API). Neither
// dialect can fail one share of a weighted action directly, so the share
// goes to a cluster that cannot serve it:
//
//   - Envoy gets a cluster name it does not know, and the route answers
//     it with cluster_not_found_response_code 500.
//   - gRPC clients cannot take an unknown name: grpc-go waits for every
//     cluster a route names before it applies the route, up to its 15 s
//     resource timeout. They get InvalidBackendCluster, a real EDS
//     cluster with no endpoints, which fails its RPCs with UNAVAILABLE,
//     as GRPCRoute asks for. It exists only while a route needs it.
const (
	// InvalidBackendCluster is the cluster, with no endpoints, that gRPC
	// clients send the share of unresolved backends to.
	InvalidBackendCluster = "meshd|invalid-backend"
	// envoyInvalidBackendCluster is the cluster name, never served, that
	// Envoy sends the share of unresolved backends to.
	envoyInvalidBackendCluster = "meshd|invalid-backend|not-found"
)

// invalidBackendCluster returns the cluster name unresolved backends'
// share goes to in dialect f.
func invalidBackendCluster(f flavor) string {
	if f == flavorEnvoy {
		return envoyInvalidBackendCluster
	}
	return InvalidBackendCluster
}

// hasUnresolvedShare reports whether some rule of b sends traffic to an
// unresolved backend beside a resolved one: the only case in which a
// route names the invalid backend cluster (a rule with no resolved
// backend answers 500 itself).
func hasUnresolvedShare(b RouteBinding) bool {
	for _, r := range b.Rules {
		var resolved, unresolved bool
		for _, be := range r.Backends {
			if be.Weight > 0 {
				resolved = resolved || be.Unresolved == ""
				unresolved = unresolved || be.Unresolved != ""
			}
		}
		if resolved && unresolved {
			return true
		}
	}
	return false
}

// invalidBackendNeeded is the item of the singleton that exists while a
// route binding names the invalid backend cluster.
type invalidBackendNeeded struct{}

// newInvalidBackend derives the invalid backend cluster and its empty load
// assignment, present while some binding needs them.
func newInvalidBackend(g *krt.Graph, bindings krt.Collection[RouteBinding]) (
	krt.Collection[Resource[*clusterv3.Cluster]], krt.Collection[Resource[*endpointv3.ClusterLoadAssignment]]) {
	const key = "unresolved"
	byShare := krt.NewIndex(bindings, "unresolved-share", func(b RouteBinding) []string {
		if hasUnresolvedShare(b) {
			return []string{key}
		}
		return nil
	})
	needed := krt.NewSingleton(g, func(ctx krt.HandlerContext) *invalidBackendNeeded {
		if len(krt.Fetch(ctx, bindings, krt.FilterIndex(byShare, key))) == 0 {
			return nil
		}
		return &invalidBackendNeeded{}
	}, krt.WithName("InvalidBackendNeeded"))
	clusters := krt.NewCollection(g, needed, func(krt.HandlerContext, invalidBackendNeeded) *Resource[*clusterv3.Cluster] {
		// No endpoint is ever dialled: the connect timeout is moot.
		r := newResource(InvalidBackendCluster, buildCluster(InvalidBackendCluster, ProtocolTCP, time.Second))
		return &r
	}, krt.WithName("InvalidBackendClusters"))
	clas := krt.NewCollection(g, needed, func(krt.HandlerContext, invalidBackendNeeded) *Resource[*endpointv3.ClusterLoadAssignment] {
		r := newResource(InvalidBackendCluster, &endpointv3.ClusterLoadAssignment{ClusterName: InvalidBackendCluster})
		return &r
	}, krt.WithName("InvalidBackendLoadAssignments"))
	return clusters, clas
}
