package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/meshd/meshd/xds/xdstest"
)

// startHealthBackends serves the gRPC health service on each ip, all on
// one port, which it returns.
func startHealthBackends(t *testing.T, ips ...string) int {
	t.Helper()
	port := 0
	for _, ip := range ips {
		l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
		if err != nil {
			t.Skipf("loopback address %s: %v", ip, err)
		}
		port = l.Addr().(*net.TCPAddr).Port
		s := grpc.NewServer()
		healthpb.RegisterHealthServer(s, health.NewServer())
		done := make(chan struct{})
		go func() { defer close(done); s.Serve(l) }()
		t.Cleanup(func() { s.Stop(); <-done })
	}
	return port
}

// xdsClientConn dials target through grpc-go's xDS resolver, bootstrapped
// as node with the servers' URIs in priority order.
func xdsClientConn(t *testing.T, servers []string, node, target string) *grpc.ClientConn {
	t.Helper()
	return xdstest.DialXDS(t, xdstest.Bootstrap(t, &corev3.Node{Id: node}, servers...), target)
}

// rpc makes one health check and returns the IP of the backend that
// answered.
func rpc(cc *grpc.ClientConn, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var p peer.Peer
	if _, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Peer(&p), grpc.WaitForReady(true)); err != nil {
		return "", err
	}
	host, _, _ := net.SplitHostPort(p.Addr.String())
	return host, nil
}

// converge waits until 10 RPCs in a row satisfy ok.
func converge(t *testing.T, cc *grpc.ClientConn, what string, ok func(ip string) bool) {
	t.Helper()
	run := 0
	waitUntil(t, what, func() bool {
		if ip, err := rpc(cc, 2*time.Second); err == nil && ok(ip) {
			run++
		} else {
			run = 0
		}
		return run >= 10
	})
}

// fleetMesh creates a namespace's Services, Pods and HTTPRoutes through
// the API server as an administrator would.
type fleetMesh struct {
	t    *testing.T
	ctx  context.Context
	kube kubernetes.Interface
	gw   gatewayclient.Interface
	ns   string
	port int
}

// newFleetMesh writes through cfg (an administrator's) in a namespace of
// its own, which it creates.
func newFleetMesh(t *testing.T, ctx context.Context, cfg *rest.Config, port int) *fleetMesh {
	ns := "fleet-" + strconv.FormatInt(time.Now().UnixNano()%1e12, 36)
	m := &fleetMesh{t: t, ctx: ctx, kube: kubernetes.NewForConfigOrDie(cfg), gw: gatewayclient.NewForConfigOrDie(cfg), ns: ns, port: port}
	if _, err := m.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return m
}

func (m *fleetMesh) service(name string) {
	m.t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: m.ns},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Name: "grpc", Port: 7000, TargetPort: intstr.FromInt32(int32(m.port))}},
		},
	}
	if _, err := m.kube.CoreV1().Services(m.ns).Create(m.ctx, svc, metav1.CreateOptions{}); err != nil {
		m.t.Fatal(err)
	}
}

// pod creates a pod and sets its status as a kubelet would: running,
// ready, at ip.
func (m *fleetMesh) pod(name, app, ip string) {
	m.t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: m.ns, Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example"}}},
	}
	p, err := m.kube.CoreV1().Pods(m.ns).Create(m.ctx, p, metav1.CreateOptions{})
	if err != nil {
		m.t.Fatal(err)
	}
	p.Status = corev1.PodStatus{
		Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
	}
	if _, err := m.kube.CoreV1().Pods(m.ns).UpdateStatus(m.ctx, p, metav1.UpdateOptions{}); err != nil {
		m.t.Fatal(err)
	}
}

// route attaches an HTTPRoute to the Service parent, sending everything
// to backend.
func (m *fleetMesh) route(name, parent, backend string) {
	m.t.Helper()
	kind, group := gatewayv1.Kind("Service"), gatewayv1.Group("")
	port := gatewayv1.PortNumber(7000)
	r := &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: m.ns},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Group: &group, Kind: &kind, Name: gatewayv1.ObjectName(parent), Port: &port}}},
			Rules:           []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{m.backendRef(backend)}}},
		},
	}
	if _, err := m.gw.GatewayV1().HTTPRoutes(m.ns).Create(m.ctx, r, metav1.CreateOptions{}); err != nil {
		m.t.Fatal(err)
	}
}

func (m *fleetMesh) backendRef(name string) gatewayv1.HTTPBackendRef {
	kind, group := gatewayv1.Kind("Service"), gatewayv1.Group("")
	port := gatewayv1.PortNumber(7000)
	return gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
		Group: &group, Kind: &kind, Name: gatewayv1.ObjectName(name), Port: &port}}}
}

// setBackend points the route's only rule at backend.
func (m *fleetMesh) setBackend(name, backend string) {
	m.t.Helper()
	r, err := m.gw.GatewayV1().HTTPRoutes(m.ns).Get(m.ctx, name, metav1.GetOptions{})
	if err != nil {
		m.t.Fatal(err)
	}
	r.Spec.Rules[0].BackendRefs = []gatewayv1.HTTPBackendRef{m.backendRef(backend)}
	if _, err := m.gw.GatewayV1().HTTPRoutes(m.ns).Update(m.ctx, r, metav1.UpdateOptions{}); err != nil {
		m.t.Fatal(err)
	}
}

// waitCondition waits until meshd's status entry of the route has the
// condition, observed at the route's current generation.
func (m *fleetMesh) waitCondition(route, typ string, status metav1.ConditionStatus, reason string) {
	m.t.Helper()
	var last string
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := m.gw.GatewayV1().HTTPRoutes(m.ns).Get(m.ctx, route, metav1.GetOptions{})
		if err != nil {
			m.t.Fatal(err)
		}
		for _, p := range r.Status.Parents {
			if p.ControllerName != controllerName {
				continue
			}
			for _, c := range p.Conditions {
				if c.Type == typ {
					last = fmt.Sprintf("%s=%s (%s, generation %d of %d)", c.Type, c.Status, c.Reason, c.ObservedGeneration, r.Generation)
					if c.Status == status && c.Reason == reason && c.ObservedGeneration == r.Generation {
						return
					}
				}
			}
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("route %s: want %s=%s (%s); last seen %q, status %+v", route, typ, status, reason, last, r.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
