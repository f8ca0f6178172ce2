package sources

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshd/meshd/krt"
)

// StaticInputs holds one krt.Static per Inputs field, for sources that
// write their collections directly and for tests of what lies downstream.
type StaticInputs struct {
	Services       krt.Static[*corev1.Service]
	Pods           krt.Static[*corev1.Pod]
	Namespaces     krt.Static[*corev1.Namespace]
	EndpointSlices krt.Static[*discoveryv1.EndpointSlice]
	Nodes          krt.Static[*corev1.Node]
	ConfigMaps     krt.Static[*corev1.ConfigMap]
	HTTPRoutes     krt.Static[*gatewayv1.HTTPRoute]
	GRPCRoutes     krt.Static[*gatewayv1.GRPCRoute]
}

// NewStaticInputs returns empty static collections named prefix+"/services"
// and so on, made with CollectionOptions plus extra (for example
// krt.WithUnsynced()).
func NewStaticInputs(g *krt.Graph, prefix string, extra ...krt.Option) StaticInputs {
	return StaticInputs{
		Services:       newStatic[*corev1.Service](g, prefix+"/services", extra),
		Pods:           newStatic[*corev1.Pod](g, prefix+"/pods", extra),
		Namespaces:     newStatic[*corev1.Namespace](g, prefix+"/namespaces", extra),
		EndpointSlices: newStatic[*discoveryv1.EndpointSlice](g, prefix+"/endpointslices", extra),
		Nodes:          newStatic[*corev1.Node](g, prefix+"/nodes", extra),
		ConfigMaps:     newStatic[*corev1.ConfigMap](g, prefix+"/configmaps", extra),
		HTTPRoutes:     newStatic[*gatewayv1.HTTPRoute](g, prefix+"/httproutes", extra),
		GRPCRoutes:     newStatic[*gatewayv1.GRPCRoute](g, prefix+"/grpcroutes", extra),
	}
}

func newStatic[T Object](g *krt.Graph, name string, extra []krt.Option) krt.Static[T] {
	return krt.NewStatic[T](g, CollectionOptions[T](name, extra...)...)
}

// Inputs returns the collections as Inputs.
func (s StaticInputs) Inputs() Inputs {
	return Inputs{
		Services:       s.Services,
		Pods:           s.Pods,
		Namespaces:     s.Namespaces,
		EndpointSlices: s.EndpointSlices,
		Nodes:          s.Nodes,
		ConfigMaps:     s.ConfigMaps,
		HTTPRoutes:     s.HTTPRoutes,
		GRPCRoutes:     s.GRPCRoutes,
	}
}

// MarkSynced marks every collection synced.
func (s StaticInputs) MarkSynced() {
	s.Services.MarkSynced()
	s.Pods.MarkSynced()
	s.Namespaces.MarkSynced()
	s.EndpointSlices.MarkSynced()
	s.Nodes.MarkSynced()
	s.ConfigMaps.MarkSynced()
	s.HTTPRoutes.MarkSynced()
	s.GRPCRoutes.MarkSynced()
}
