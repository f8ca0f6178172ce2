package collections_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
)

// ExampleBuild derives the xDS resources of one gRPC service with one
// ready pod: what a client dialing xds:///echo.demo.svc.cluster.local:7000
// is served. Static inputs stand in for a source; their empty mesh config
// reads as meshconfig.Default.
func ExampleBuild() {
	g := krt.NewGraph()
	in := sources.NewStaticInputs(g, "example")
	m := collections.Build(g, in.Inputs(), collections.WithSidecarResources(false))

	in.Set(&corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "echo"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "echo"},
			Ports:    []corev1.ServicePort{{Name: "grpc", Port: 7000, TargetPort: intstr.FromInt32(9000)}},
		},
	}, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "echo-0", Labels: map[string]string{"app": "echo"}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.7",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	})

	for _, l := range m.Listeners.List() {
		fmt.Println("listener", l.Name)
	}
	for _, r := range m.RouteConfigurations.List() {
		fmt.Println("route", r.Name, "->", r.Message().VirtualHosts[0].Routes[0].GetRoute().GetCluster())
	}
	for _, c := range m.ClusterLoadAssignments.List() {
		ep := c.Message().Endpoints[0].LbEndpoints[0]
		sa := ep.GetEndpoint().GetAddress().GetSocketAddress()
		fmt.Println("endpoints", c.Name, sa.Address, sa.GetPortValue(), ep.HealthStatus)
	}
	// Output:
	// listener echo.demo.svc.cluster.local:7000
	// listener grpc/server?xds.resource.listening_address=10.0.0.7:9000
	// route echo.demo.svc.cluster.local:7000 -> outbound|7000||echo.demo.svc.cluster.local
	// endpoints outbound|7000||echo.demo.svc.cluster.local 10.0.0.7 9000 HEALTHY
}
