package main

import (
	"context"
	"maps"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
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
	f := startFleet(t, ctx)
	f.waitSameVersions(t)
	leader := f.checkOnlyLeaderWritesStatus(t)
	cc := f.dialThroughLeader(t, leader)
	successor := f.killLeader(t, leader, cc)
	f.checkClientResumes(t, leader)
	f.checkConfigAfterLoss(t, cc, leader, successor)
	for _, r := range others(f.replicas, leader) {
		r.stop(t)
	}
}

// fleet is TestFleet's world: a mesh of two backends, a valid and a broken
// route, and the three replicas serving it.
type fleet struct {
	ctx              context.Context
	kube             kubernetes.Interface
	mesh             *fleetMesh
	replicas         []*replica
	echoIP, canaryIP string
}

// startFleet writes the mesh and starts three replicas, as deploy/'s
// service account, and waits until each is ready.
func startFleet(t *testing.T, ctx context.Context) *fleet {
	env := kubeEnv(t)
	kc, err := env.KubeconfigAs(t.TempDir(), fleetAccount, "system:serviceaccounts", "system:serviceaccounts:"+fleetNamespace, "system:authenticated")
	if err != nil {
		t.Fatal(err)
	}
	f := &fleet{ctx: ctx, echoIP: "127.0.0.41", canaryIP: "127.0.0.42"}
	// Two backends on one port, as two pods of a mesh would be.
	port := startHealthBackends(t, f.echoIP, f.canaryIP)
	f.mesh = newFleetMesh(t, ctx, env.Config, port)
	f.kube = f.mesh.kube
	f.mesh.service("echo")
	f.mesh.service("canary")
	f.mesh.pod("echo-0", "echo", f.echoIP)
	f.mesh.pod("canary-0", "canary", f.canaryIP)
	f.mesh.route("good", "echo", "echo")
	f.mesh.route("broken", "canary", "missing")

	f.replicas = make([]*replica, 3)
	for i := range f.replicas {
		f.replicas[i] = startReplica(t, kc, "--leader-elect-resource-namespace", fleetNamespace)
	}
	for _, r := range f.replicas {
		r.waitReady(t)
	}
	return f
}

// waitSameVersions waits until the replicas agree on every resource and its
// version: a proxy moving between them needs nothing re-sent.
func (f *fleet) waitSameVersions(t *testing.T) {
	t.Helper()
	first := f.replicas[0]
	want := first.versions(t)
	if len(want) == 0 {
		t.Fatal("replica serves no resources")
	}
	for _, r := range f.replicas[1:] {
		waitUntil(t, "replica "+r.debug+" serves what "+first.debug+" does, at the same versions", func() bool {
			return maps.Equal(r.versions(t), want)
		})
	}
}

// checkOnlyLeaderWritesStatus waits for a leader, checks every replica
// names it, and that it, and it alone, writes the routes' status: the
// valid route accepted with its references resolved, the broken one
// accepted with a missing backend. It returns the leader.
func (f *fleet) checkOnlyLeaderWritesStatus(t *testing.T) *replica {
	t.Helper()
	leader := waitLeader(t, f.replicas, nil)
	t.Logf("leader: replica %s", leader.debug)
	checkRoles(t, f.replicas, leader)

	f.mesh.waitCondition("good", "Accepted", metav1.ConditionTrue, "Accepted")
	f.mesh.waitCondition("good", "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs")
	f.mesh.waitCondition("broken", "ResolvedRefs", metav1.ConditionFalse, "BackendNotFound")
	for _, r := range f.replicas {
		if w := r.metric(t, statusWritten); (r == leader) != (w > 0) {
			t.Errorf("replica %s (leader: %v) made %v status writes: only the leader may write", r.debug, r == leader, w)
		}
	}
	return leader
}

// statusWritten is the sample of the status writes a replica made.
const statusWritten = `meshd_route_status_writes_total{result="written"}`

// dialThroughLeader connects a proxyless client, its control plane reached
// through one name that resolves to every replica, the leader first, and
// waits until its RPCs reach echo.
func (f *fleet) dialThroughLeader(t *testing.T, leader *replica) *grpc.ClientConn {
	t.Helper()
	target := "echo." + f.mesh.ns + ".svc.cluster.local:7000"
	cc := fleetClient(t, append([]*replica{leader}, others(f.replicas, leader)...), target)
	converge(t, cc, "RPCs to echo", func(ip string) bool { return ip == f.echoIP })
	if !leader.hasProxy(t, "fleet-client") {
		t.Fatalf("the client is not connected to the leader %s", leader.debug)
	}
	return cc
}

// killLeader kills the leader as a node failure would (no lease release, no
// goodbye to the proxies), checks that cc's RPCs keep working and that
// another replica takes the Lease within the lease duration and a retry,
// and returns that successor.
func (f *fleet) killLeader(t *testing.T, leader *replica, cc *grpc.ClientConn) *replica {
	t.Helper()
	killed := time.Now()
	leader.kill(t)
	// The dead leader renews no more: its last renewal is in the Lease.
	leases := f.kube.CoordinationV1().Leases(fleetNamespace)
	dead, err := leases.Get(f.ctx, "meshd", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ip, err := rpc(cc, 2*time.Second); err != nil || ip != f.echoIP {
		t.Fatalf("RPC right after the control plane's loss: %s, %v", ip, err)
	}
	successor := waitLeader(t, others(f.replicas, leader), leader)
	checkRoles(t, others(f.replicas, leader), successor)
	taken, err := leases.Get(f.ctx, "meshd", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Measured on the Lease: from the dead leader's last renewal to the
	// successor's acquisition. client-go bounds it by the lease duration
	// plus a retry period (with its jitter).
	gap := taken.Spec.AcquireTime.Sub(dead.Spec.RenewTime.Time)
	t.Logf("takeover: replica %s acquired the Lease %v after the dead leader's last renewal, and says it leads %v after the kill (lease duration 2s, retry period 250ms)",
		successor.debug, gap.Round(10*time.Millisecond), time.Since(killed).Round(10*time.Millisecond))
	// Two retries (with jitter) bound when the successor sees the last
	// renewal and when it next tries; a second more is for API calls that
	// are slow on a busy machine.
	if *taken.Spec.HolderIdentity == *dead.Spec.HolderIdentity || gap <= 0 || gap > 2*time.Second+2*300*time.Millisecond+time.Second {
		t.Errorf("Lease went from %s (renewed %v) to %s (acquired %v): want another holder within the lease duration and a retry",
			*dead.Spec.HolderIdentity, dead.Spec.RenewTime, *taken.Spec.HolderIdentity, taken.Spec.AcquireTime)
	}
	return successor
}

// checkClientResumes waits until the client reconnects to a survivor, and
// checks that the survivor pushed it nothing: it already holds every
// resource at the version the survivor has.
func (f *fleet) checkClientResumes(t *testing.T, dead *replica) {
	t.Helper()
	var moved *replica
	waitUntil(t, "the client reconnected to a surviving replica", func() bool {
		for _, r := range others(f.replicas, dead) {
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
}

// checkConfigAfterLoss checks that config changed after the leader's loss
// reaches the client, and that the successor, and no replica that never
// led, writes the status of the fixed route.
func (f *fleet) checkConfigAfterLoss(t *testing.T, cc *grpc.ClientConn, dead, successor *replica) {
	t.Helper()
	f.mesh.setBackend("good", "canary")
	converge(t, cc, "RPCs moved to canary", func(ip string) bool { return ip == f.canaryIP })
	f.mesh.setBackend("broken", "echo")
	f.mesh.waitCondition("broken", "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs")
	if w := successor.metric(t, statusWritten); w == 0 {
		t.Errorf("the new leader wrote no status")
	}
	for _, r := range others(f.replicas, dead, successor) {
		if w := r.metric(t, statusWritten); w != 0 {
			t.Errorf("replica %s, never leader, made %v status writes", r.debug, w)
		}
	}
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
