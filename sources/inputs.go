package sources

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshd/meshd/krt"
)

// Inputs holds the input collections a source produces. Every field is set
// by both sources; a source that cannot watch a kind (for example a cluster
// without the Gateway API CRDs) gives an empty, synced collection.
type Inputs struct {
	Services       krt.Collection[*corev1.Service]
	Pods           krt.Collection[*corev1.Pod]
	Namespaces     krt.Collection[*corev1.Namespace]
	EndpointSlices krt.Collection[*discoveryv1.EndpointSlice]
	Nodes          krt.Collection[*corev1.Node]
	ConfigMaps     krt.Collection[*corev1.ConfigMap]
	HTTPRoutes     krt.Collection[*gatewayv1.HTTPRoute]
	GRPCRoutes     krt.Collection[*gatewayv1.GRPCRoute]
}

// JoinInputs returns Inputs whose collections hold the items of a and b;
// where both hold a key, a's item wins. Typical use: a is a folder of local
// overrides, b the cluster.
func JoinInputs(g *krt.Graph, a, b Inputs) Inputs {
	return Inputs{
		Services:       join(g, "services", a.Services, b.Services),
		Pods:           join(g, "pods", a.Pods, b.Pods),
		Namespaces:     join(g, "namespaces", a.Namespaces, b.Namespaces),
		EndpointSlices: join(g, "endpointslices", a.EndpointSlices, b.EndpointSlices),
		Nodes:          join(g, "nodes", a.Nodes, b.Nodes),
		ConfigMaps:     join(g, "configmaps", a.ConfigMaps, b.ConfigMaps),
		HTTPRoutes:     join(g, "httproutes", a.HTTPRoutes, b.HTTPRoutes),
		GRPCRoutes:     join(g, "grpcroutes", a.GRPCRoutes, b.GRPCRoutes),
	}
}

// join joins a and b under CollectionOptions, so the joined collection keys,
// compares and (for Services) selects like its inputs.
func join[T Object](g *krt.Graph, name string, a, b krt.Collection[T]) krt.Collection[T] {
	return krt.Join(g, []krt.Collection[T]{a, b}, CollectionOptions[T]("joined/"+name)...)
}
