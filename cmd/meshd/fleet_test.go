package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
	grpcxds "google.golang.org/grpc/xds"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/meshd/meshd/cmd/meshd/internal/debugui"
	"github.com/meshd/meshd/deploy"
	"github.com/meshd/meshd/sources/kube/kubetest"
	"github.com/meshd/meshd/xds"
)

// The service account deploy/ creates, whose permissions the replicas run
// with: the test proves the manifests' RBAC is enough.
const (
	fleetNamespace = "meshd-system"
	fleetAccount   = "system:serviceaccount:meshd-system:meshd"
	controllerName = "meshd.io/mesh-controller"
)

// TestFleet runs three meshd processes against one real kube-apiserver (RBAC
// on, each impersonating deploy/'s service account), with short leader
// election timings. It checks that exactly one replica leads and writes
// route status, that the status conditions are right for a valid and a
// broken route, and that when the leader is killed another takes over and
// a grpc-go proxyless client, whose control-plane address resolves to
// every replica as a Kubernetes Service's would, keeps its RPCs working,
// reconnects to a surviving replica without being pushed what it holds,
// and converges on config changed afterwards.
func TestFleet(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	env := kubeEnv(t)
	kc, err := env.KubeconfigAs(t.TempDir(), fleetAccount, "system:serviceaccounts", "system:serviceaccounts:"+fleetNamespace, "system:authenticated")
	if err != nil {
		t.Fatal(err)
	}
	kube := kubernetes.NewForConfigOrDie(env.Config)
	gw := gatewayclient.NewForConfigOrDie(env.Config)

	// Two backends on one port, as two pods of a mesh would be.
	echoIP, canaryIP := "127.0.0.41", "127.0.0.42"
	port := startHealthBackends(t, echoIP, canaryIP)
	mesh := newFleetMesh(t, ctx, kube, gw, port)
	ns := mesh.ns
	mesh.service("echo")
	mesh.service("canary")
	mesh.pod("echo-0", "echo", echoIP)
	mesh.pod("canary-0", "canary", canaryIP)
	mesh.route("good", "echo", "echo")
	mesh.route("broken", "canary", "missing")

	replicas := make([]*replica, 3)
	for i := range replicas {
		replicas[i] = startReplica(t, kc, "--leader-elect-resource-namespace", fleetNamespace)
	}
	for _, r := range replicas {
		r.waitReady(t)
	}
	// The replicas agree on every resource and its version: a proxy
	// moving between them needs nothing re-sent.
	want := replicas[0].versions(t)
	if len(want) == 0 {
		t.Fatal("replica serves no resources")
	}
	for _, r := range replicas[1:] {
		waitUntil(t, "replica "+r.debug+" serves what "+replicas[0].debug+" does, at the same versions", func() bool {
			return maps.Equal(r.versions(t), want)
		})
	}
	leader := waitLeader(t, replicas, nil)
	t.Logf("leader: replica %s", leader.debug)
	checkRoles(t, replicas, leader)

	// Status: the valid route is accepted with its references resolved,
	// the broken one accepted with a missing backend.
	mesh.waitCondition("good", "Accepted", metav1.ConditionTrue, "Accepted")
	mesh.waitCondition("good", "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs")
	mesh.waitCondition("broken", "ResolvedRefs", metav1.ConditionFalse, "BackendNotFound")
	for _, r := range replicas {
		if w := r.metric(t, `meshd_route_status_writes_total{result="written"}`); (r == leader) != (w > 0) {
			t.Errorf("replica %s (leader: %v) made %v status writes: only the leader may write", r.debug, r == leader, w)
		}
	}

	// A proxyless client, its control plane reached through one name that
	// resolves to every replica, the leader first.
	target := "echo." + ns + ".svc.cluster.local:7000"
	cc := fleetClient(t, append([]*replica{leader}, others(replicas, leader)...), target)
	converge(t, cc, "RPCs to echo", func(ip string) bool { return ip == echoIP })
	if !leader.hasProxy(t, "fleet-client") {
		t.Fatalf("the client is not connected to the leader %s", leader.debug)
	}

	// Kill the leader as a node failure would: no lease release, no
	// goodbye to the proxies.
	killed := time.Now()
	leader.kill(t)
	// The dead leader renews no more: its last renewal is in the Lease.
	leases := kube.CoordinationV1().Leases(fleetNamespace)
	dead, err := leases.Get(ctx, "meshd", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ip, err := rpc(cc, 2*time.Second); err != nil || ip != echoIP {
		t.Fatalf("RPC right after the control plane's loss: %s, %v", ip, err)
	}
	successor := waitLeader(t, others(replicas, leader), leader)
	checkRoles(t, others(replicas, leader), successor)
	taken, err := leases.Get(ctx, "meshd", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Measured on the Lease: from the dead leader's last renewal to the
	// successor's acquisition. client-go bounds it by the lease duration
	// plus a retry period (with its jitter).
	gap := taken.Spec.AcquireTime.Sub(dead.Spec.RenewTime.Time)
	t.Logf("takeover: replica %s acquired the Lease %v after the dead leader's last renewal, and says it leads %v after the kill (lease duration 2s, retry period 250ms)",
		successor.debug, gap.Round(10*time.Millisecond), time.Since(killed).Round(10*time.Millisecond))
	if *taken.Spec.HolderIdentity == *dead.Spec.HolderIdentity || gap <= 0 || gap > 2*time.Second+2*300*time.Millisecond {
		t.Errorf("Lease went from %s (renewed %v) to %s (acquired %v): want another holder within the lease duration and a retry",
			*dead.Spec.HolderIdentity, dead.Spec.RenewTime, *taken.Spec.HolderIdentity, taken.Spec.AcquireTime)
	}

	// The client reconnects to a survivor, which pushes it nothing: it
	// already holds every resource at the version the survivor has.
	var moved *replica
	waitUntil(t, "the client reconnected to a surviving replica", func() bool {
		for _, r := range others(replicas, leader) {
			if r.hasProxy(t, "fleet-client") {
				moved = r
				return true
			}
		}
		return false
	})
	for _, ts := range moved.proxy(t, "fleet-client").Types {
		if ts.Pushes != 0 || !ts.Resumed {
			t.Errorf("replica %s, %s: %d pushes, resumed %v; want none pushed to a client holding the config already", moved.debug, ts.TypeURL, ts.Pushes, ts.Resumed)
		}
	}

	// Config changed after the loss reaches the client, and the new leader
	// writes the status of the fixed route.
	mesh.setBackend("good", "canary")
	converge(t, cc, "RPCs moved to canary", func(ip string) bool { return ip == canaryIP })
	mesh.setBackend("broken", "echo")
	mesh.waitCondition("broken", "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs")
	if w := successor.metric(t, `meshd_route_status_writes_total{result="written"}`); w == 0 {
		t.Errorf("the new leader wrote no status")
	}
	for _, r := range others(replicas, leader, successor) {
		if w := r.metric(t, `meshd_route_status_writes_total{result="written"}`); w != 0 {
			t.Errorf("replica %s, never leader, made %v status writes", r.debug, w)
		}
	}

	for _, r := range others(replicas, leader) {
		r.stop(t)
	}
}

// apiServer is the package's API server, started by the first test that
// needs it, with RBAC on and the Gateway API CRDs and deploy/ applied.
var apiServer = kubetest.NewShared(func(ctx context.Context, e *kubetest.Env) error {
	if err := kubetest.InstallGatewayCRDs(ctx, e.Config); err != nil {
		return err
	}
	if err := deploy.Apply(ctx, e.Config); err != nil {
		return fmt.Errorf("applying deploy/: %w", err)
	}
	return nil
}, kubetest.WithAuthorization("RBAC"))

// kubeEnv returns the API server, or skips t when it cannot run here.
func kubeEnv(t *testing.T) *kubetest.Env { return apiServer.Env(t) }

// fleetLease is the replicas' lease timing: short, so takeover is quick.
var fleetLease = []string{"--leader-elect-lease-duration", "2s", "--leader-elect-renew-deadline", "1500ms", "--leader-elect-retry-period", "250ms"}

// replica is one meshd process of the fleet.
type replica struct {
	args       []string
	cmd        *exec.Cmd
	xds, debug string
	logs       *lockedBuffer
	exited     chan error
	dead       bool
}

// startReplica starts meshd on the cluster of kubeconfig with
// --leader-elect, fleetLease and extra flags.
func startReplica(t *testing.T, kubeconfig string, extra ...string) *replica {
	t.Helper()
	r := &replica{xds: freeAddr(t), debug: freeAddr(t), logs: &lockedBuffer{}, exited: make(chan error, 1)}
	args := append([]string{"--kubeconfig", kubeconfig, "--leader-elect",
		"--xds-addr", r.xds, "--debug-addr", r.debug, "--push-debounce", "10ms", "--log-format", "json"}, fleetLease...)
	r.args = append(args, extra...)
	r.start(t)
	t.Cleanup(func() {
		if !r.dead {
			r.cmd.Process.Kill()
			<-r.exited
		}
		if t.Failed() {
			t.Logf("replica %s log:\n%s", r.debug, r.logs.String())
		}
	})
	return r
}

func (r *replica) start(t *testing.T) {
	t.Helper()
	r.cmd = exec.Command(bin, r.args...)
	r.cmd.Stdout, r.cmd.Stderr = r.logs, r.logs
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.dead = false
	go func() { r.exited <- r.cmd.Wait() }()
}

// restart starts a stopped replica again, on the same addresses.
func (r *replica) restart(t *testing.T) {
	t.Helper()
	if !r.dead {
		t.Fatalf("replica %s restarted while running", r.debug)
	}
	r.start(t)
}

func (r *replica) waitReady(t *testing.T) {
	t.Helper()
	waitUntil(t, "replica "+r.debug+" ready", func() bool {
		code, _ := get("http://" + r.debug + "/readyz")
		return code == http.StatusOK
	})
}

// metric returns the value of one sample of /metrics, 0 when absent.
func (r *replica) metric(t *testing.T, sample string) float64 {
	t.Helper()
	_, body := get("http://" + r.debug + "/metrics")
	for line := range strings.SplitSeq(body, "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", sample, line, err)
			}
			return f
		}
	}
	return 0
}

// proxy returns the node's connected stream as the debug UI's JSON API
// shows it, nil if there is none.
func (r *replica) proxy(t *testing.T, node string) *debugui.ProxyStatus {
	t.Helper()
	code, body := get("http://" + r.debug + "/debug/api/proxies")
	if code != http.StatusOK {
		t.Fatalf("%s/debug/api/proxies = %d %s", r.debug, code, body)
	}
	var res debugui.ProxiesResult
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatalf("%s/debug/api/proxies: %v", r.debug, err)
	}
	for _, p := range res.Proxies {
		if p.NodeID == node && p.State == debugui.ProxyConnected {
			return &p.ProxyStatus
		}
	}
	return nil
}

func (r *replica) hasProxy(t *testing.T, node string) bool { return r.proxy(t, node) != nil }

func (r *replica) kill(t *testing.T) {
	t.Helper()
	r.cmd.Process.Kill()
	<-r.exited
	r.dead = true
}

func (r *replica) stop(t *testing.T) {
	t.Helper()
	r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-r.exited:
		r.dead = true
		if err != nil {
			t.Errorf("replica %s after SIGTERM: %v", r.debug, err)
		}
	case <-time.After(15 * time.Second):
		t.Errorf("replica %s still running 15s after SIGTERM", r.debug)
	}
}

// waitLeader waits until exactly one of rs says it leads, and returns it;
// not, if set, must not be it.
func waitLeader(t *testing.T, rs []*replica, not *replica) *replica {
	t.Helper()
	var leader *replica
	waitUntil(t, "exactly one leader", func() bool {
		leader = nil
		for _, r := range rs {
			if r.metric(t, "meshd_leader") == 1 {
				if leader != nil {
					t.Fatalf("replicas %s and %s both lead", leader.debug, r.debug)
				}
				leader = r
			}
		}
		return leader != nil && leader != not
	})
	return leader
}

// checkRoles checks that each replica's debug UI says who leads: the
// leader that it does, the others that they stand by for its identity.
func checkRoles(t *testing.T, rs []*replica, leader *replica) {
	t.Helper()
	id := leader.replica(t).Identity
	if !leader.replica(t).Leading || id == "" {
		t.Fatalf("leader %s: debug UI says %+v", leader.debug, leader.replica(t))
	}
	for _, r := range others(rs, leader) {
		waitUntil(t, "replica "+r.debug+" to name the leader "+id, func() bool {
			st := r.replica(t)
			return !st.Leading && st.Leader == id && st.Identity != id
		})
	}
}

// replica returns the debug UI's view of the replica's election.
func (r *replica) replica(t *testing.T) debugui.Replica {
	t.Helper()
	code, body := get("http://" + r.debug + "/debug/api/replica")
	var res debugui.ReplicaResult
	if err := json.Unmarshal([]byte(body), &res); code != http.StatusOK || err != nil || !res.Available || res.Replica == nil {
		t.Fatalf("%s/debug/api/replica = %d %s (%v)", r.debug, code, body, err)
	}
	return *res.Replica
}

func others(rs []*replica, not ...*replica) []*replica {
	var out []*replica
	for _, r := range rs {
		keep := true
		for _, n := range not {
			keep = keep && r != n
		}
		if keep {
			out = append(out, r)
		}
	}
	return out
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

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

// fleetClient dials target through grpc-go's xDS resolver; its bootstrap
// names one control-plane address that resolves to every replica, in
// order, as a ClusterIP Service spreads proxies over replicas.
func fleetClient(t *testing.T, rs []*replica, target string) *grpc.ClientConn {
	t.Helper()
	scheme := "meshd-fleet-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	res := manual.NewBuilderWithScheme(scheme)
	var addrs []resolver.Address
	for _, r := range rs {
		addrs = append(addrs, resolver.Address{Addr: r.xds})
	}
	res.InitialState(resolver.State{Addresses: addrs})
	// The xDS client dials its server by URI through the global registry.
	resolver.Register(res)
	return xdsClientConn(t, []string{scheme + ":///meshd"}, "fleet-client", target)
}

// xdsClientConn dials target through grpc-go's xDS resolver, bootstrapped
// as node with the servers' URIs in priority order.
func xdsClientConn(t *testing.T, servers []string, node, target string) *grpc.ClientConn {
	t.Helper()
	var entries []string
	for _, s := range servers {
		entries = append(entries, fmt.Sprintf(`{"server_uri": %q, "channel_creds": [{"type": "insecure"}], "server_features": ["xds_v3"]}`, s))
	}
	bootstrap := fmt.Sprintf(`{"xds_servers": [%s], "node": {"id": %q}}`, strings.Join(entries, ","), node)
	rb, err := grpcxds.NewXDSResolverWithConfigForTesting([]byte(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	cc, err := grpc.NewClient("xds:///"+target, grpc.WithResolvers(rb), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
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

// newFleetMesh creates a namespace of its own.
func newFleetMesh(t *testing.T, ctx context.Context, kube kubernetes.Interface, gw gatewayclient.Interface, port int) *fleetMesh {
	ns := "fleet-" + strconv.FormatInt(time.Now().UnixNano()%1e12, 36)
	m := &fleetMesh{t: t, ctx: ctx, kube: kube, gw: gw, ns: ns, port: port}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
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

// versions fetches every resource a replica serves over one Delta stream
// subscribed to everything, and returns "type name" → version.
func (r *replica) versions(t *testing.T) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	cc, err := grpc.NewClient(r.xds, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(cc).DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	types := []string{xds.ClusterType, xds.EndpointType, xds.ListenerType, xds.RouteType}
	for _, typ := range types {
		if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{
			Node: &corev3.Node{Id: "version-check"}, TypeUrl: typ, ResourceNamesSubscribe: []string{"*"},
		}); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string]string{}
	for answered := map[string]bool{}; len(answered) < len(types); {
		resp, err := stream.Recv()
		if err != nil {
			t.Fatalf("delta stream to %s: %v", r.xds, err)
		}
		answered[resp.TypeUrl] = true
		for _, res := range resp.Resources {
			out[resp.TypeUrl+" "+res.Name] = res.Version
		}
		if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resp.TypeUrl, ResponseNonce: resp.Nonce}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
