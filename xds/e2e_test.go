package xds_test

import (
	"fmt"
	"net"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/internal/meshmodel"
)

// TestEndToEnd drives Kubernetes objects through the mesh model and the
// server to grpc-go's xDS client: pods are real gRPC servers on loopback
// addresses of their own, sharing one port as pods of a service do.
func TestEndToEnd(t *testing.T) {
	ips := []string{"127.0.0.11", "127.0.0.12", "127.0.0.13", "127.0.0.14"}
	port := backendsOnOnePort(t, ips)

	g := krt.NewGraph()
	mesh := meshmodel.New(g, "test")
	in := mesh.Inputs
	srv := xds.New(g, mesh.Sources, xds.WithDebounce(0))

	in.Set(
		k8sService("front", port), k8sService("echo", port), k8sService("canary", port),
		k8sPod("echo-0", "echo", ips[0]), k8sPod("echo-1", "echo", ips[1]), k8sPod("canary-0", "canary", ips[2]),
	)
	in.Set(split("front", "echo", "canary", 90, 10))
	addr := serve(t, g, srv)
	at := func(i int) string { return net.JoinHostPort(ips[i], fmt.Sprint(port)) }

	// The echo service: RPCs reach both pods; removing and adding pods
	// moves traffic.
	echo := xdsClient(t, addr, "echo-client", "echo.ns.svc.cluster.local:7000")
	reachAll(t, echo, at(0), at(1))
	in.Delete(k8sPod("echo-1", "echo", ips[1]))
	converge(t, echo, 20, "echo-1 drained", func(a string) bool { return a == at(0) })
	in.Set(k8sPod("echo-2", "echo", ips[3]))
	converge(t, echo, 1, "echo-2 reached", func(a string) bool { return a == at(3) })
	if got := spread(t, echo, 30); got[at(0)] == 0 || got[at(3)] == 0 || len(got) != 2 {
		t.Fatalf("echo RPCs: %v, want echo-0 and echo-2", got)
	}

	// The front service routes 90/10 to echo and canary.
	front := xdsClient(t, addr, "front-client", "front.ns.svc.cluster.local:7000")
	converge(t, front, 1, "canary reached", func(a string) bool { return a == at(2) })
	const n = 1000
	got := spread(t, front, n)
	if toCanary := got[at(2)]; toCanary < 50 || toCanary > 160 || got[at(0)]+got[at(3)]+toCanary != n {
		t.Fatalf("90/10 split: %v", got)
	}

	// 0/100 moves all of front's traffic to canary.
	in.Set(split("front", "echo", "canary", 0, 100))
	converge(t, front, 20, "all traffic to canary", func(a string) bool { return a == at(2) })
	if got := spread(t, front, 100); got[at(2)] != 100 {
		t.Fatalf("0/100 split: %v", got)
	}

	for _, id := range []string{"echo-client", "front-client"} {
		for typ, ts := range proxyByNode(t, srv, id).Types {
			if ts.Nacks != 0 {
				t.Errorf("%s rejected %s: %+v", id, typ, ts.LastNack)
			}
		}
	}
}

// backendsOnOnePort starts a gRPC health server on each ip, all on one
// port, and returns the port.
func backendsOnOnePort(t *testing.T, ips []string) int {
	t.Helper()
	for attempt := 0; attempt < 20; attempt++ {
		first, err := net.Listen("tcp", net.JoinHostPort(ips[0], "0"))
		if err != nil {
			t.Fatalf("listen on %s: %v", ips[0], err)
		}
		port := first.Addr().(*net.TCPAddr).Port
		lis := []net.Listener{first}
		for _, ip := range ips[1:] {
			l, err := net.Listen("tcp", net.JoinHostPort(ip, fmt.Sprint(port)))
			if err != nil {
				break
			}
			lis = append(lis, l)
		}
		if len(lis) < len(ips) {
			for _, l := range lis {
				l.Close()
			}
			continue
		}
		for _, l := range lis {
			serveHealth(t, l)
		}
		return port
	}
	t.Fatal("no port free on every backend address")
	return 0
}

func k8sService(name string, targetPort int) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: corev1.ServiceSpec{
			Selector:  map[string]string{"app": name},
			ClusterIP: "10.96.0.1",
			Ports: []corev1.ServicePort{{
				Name: "grpc", Port: 7000, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt(targetPort),
			}},
		},
	}
}

func k8sPod(name, app, ip string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{ServiceAccountName: app},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			PodIP:      ip,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		},
	}
}

// split is an HTTPRoute attached to service parent, splitting its traffic
// between services a and b.
func split(parent, a, b string, wa, wb int32) *gatewayv1.HTTPRoute {
	port := gatewayv1.PortNumber(7000)
	ref := func(name string, w int32) gatewayv1.HTTPBackendRef {
		return gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(name), Port: &port},
			Weight:                 &w,
		}}
	}
	group, kind := gatewayv1.Group(""), gatewayv1.Kind("Service")
	return &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "split"},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{
				Group: &group, Kind: &kind, Name: gatewayv1.ObjectName(parent),
			}}},
			Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{ref(a, wa), ref(b, wb)}}},
		},
	}
}
