package collections_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources/meshconfig"
)

func key[T metav1.Object](o T) string { return o.GetNamespace() + "/" + o.GetName() }

// ExampleBuild derives the xDS resources of one gRPC service with one
// ready pod: what a client dialing xds:///echo.demo.svc.cluster.local:7000
// is served.
func ExampleBuild() {
	g := krt.NewGraph()
	services := krt.NewStatic[*corev1.Service](g, krt.WithKey(key[*corev1.Service]),
		krt.WithSelector(func(s *corev1.Service) map[string]string { return s.Spec.Selector }))
	pods := krt.NewStatic[*corev1.Pod](g, krt.WithKey(key[*corev1.Pod]))
	m := collections.Build(g, collections.Inputs{
		Services:       services,
		Pods:           pods,
		Namespaces:     krt.NewStatic[*corev1.Namespace](g, krt.WithKey(key[*corev1.Namespace])),
		EndpointSlices: krt.NewStatic[*discoveryv1.EndpointSlice](g, krt.WithKey(key[*discoveryv1.EndpointSlice])),
		Nodes:          krt.NewStatic[*corev1.Node](g, krt.WithKey(key[*corev1.Node])),
		HTTPRoutes:     krt.NewStatic[*gatewayv1.HTTPRoute](g, krt.WithKey(key[*gatewayv1.HTTPRoute])),
		GRPCRoutes:     krt.NewStatic[*gatewayv1.GRPCRoute](g, krt.WithKey(key[*gatewayv1.GRPCRoute])),
		MeshConfig:     krt.NewStaticSingleton[meshconfig.MeshConfig](g, nil),
	}, collections.WithSidecarResources(false))

	services.Set(&corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "echo"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "echo"},
			Ports:    []corev1.ServicePort{{Name: "grpc", Port: 7000, TargetPort: intstr.FromInt32(9000)}},
		},
	})
	pods.Set(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "echo-0", Labels: map[string]string{"app": "echo"}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.7",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	})

	for _, l := range m.Listeners.List() {
		fmt.Println("listener", l.Name)
	}
	for _, r := range m.RouteConfigurations.List() {
		fmt.Println("route", r.Name, "->", r.Message.VirtualHosts[0].Routes[0].GetRoute().GetCluster())
	}
	for _, c := range m.ClusterLoadAssignments.List() {
		ep := c.Message.Endpoints[0].LbEndpoints[0]
		sa := ep.GetEndpoint().GetAddress().GetSocketAddress()
		fmt.Println("endpoints", c.Name, sa.Address, sa.GetPortValue(), ep.HealthStatus)
	}
	// Output:
	// listener echo.demo.svc.cluster.local:7000
	// route echo.demo.svc.cluster.local:7000 -> outbound|7000||echo.demo.svc.cluster.local
	// endpoints outbound|7000||echo.demo.svc.cluster.local 10.0.0.7 9000 HEALTHY
}
