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
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
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
