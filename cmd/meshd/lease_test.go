package main

import (
	"context"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/util/retry"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
)

// TestLeaseLost checks the leader's side of the election against a real
// API server: a leader whose Lease is taken stops writing status at its
// next renewal and writes nothing while it does not lead; once the
// Lease is free it leads again and catches up; and a leader stopped with
// SIGTERM releases the Lease, so a standby takes over within a retry
// period rather than a lease duration.
func TestLeaseLost(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	env := kubeEnv(t)
	mesh := newFleetMesh(t, ctx, env.Config, 7000)
	l := &leaseRun{ctx: ctx, kubeconfig: env.Kubeconfig, mesh: mesh, gw: mesh.gw,
		leases: mesh.kube.CoordinationV1().Leases("default"), name: uniqueName("lease-lost-")}
	l.mesh.service("web")
	l.mesh.route("r", "web", "web")

	a := l.startReplica(t)
	waitLeader(t, []*replica{a}, nil)
	l.mesh.waitCondition("r", "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs")
	l.takeLeaseAndWaitStepDown(t, a)
	l.checkNoStatusWhileStandby(t, a)
	l.releaseLeaseAndCatchUp(t, a)
	l.checkCleanStopHandsOver(t, a)
}

// uniqueName returns prefix and a suffix of the clock, for a Lease of the
// test's own, so that one test does not depend on another's.
func uniqueName(prefix string) string {
	return prefix + strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
}

// leaseRun is TestLeaseLost's world: a route, its own Lease, and an
// administrator's kubeconfig.
type leaseRun struct {
	ctx        context.Context
	kubeconfig string
	gw         gatewayclient.Interface
	leases     coordinationv1.LeaseInterface
	name       string // of the Lease
	mesh       *fleetMesh
}

// startReplica starts a ready replica electing on l's Lease. Its lease
// duration is well above the handover expected, so a handover that waited
// for the Lease to expire shows; and its renew deadline well above the
// step-down expected, so one that waited for it shows.
func (l *leaseRun) startReplica(t *testing.T) *replica {
	t.Helper()
	r := startReplica(t, l.kubeconfig, "--leader-elect-resource-namespace", "default", "--leader-elect-resource-name", l.name,
		"--leader-elect-lease-duration", "30s", "--leader-elect-renew-deadline", "15s")
	r.waitReady(t)
	return r
}

// takeLeaseAndWaitStepDown gives the Lease to another holder, as a replica
// would that believes the leader's term over (a partition, a paused
// process), and checks that the leader a stops on seeing the new holder, at
// its next renewal, not once the renew deadline has passed.
func (l *leaseRun) takeLeaseAndWaitStepDown(t *testing.T, a *replica) {
	t.Helper()
	// The leader renews every retry period: an update between its read
	// and ours conflicts, and is tried again on the newer Lease.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		lease, err := l.leases.Get(l.ctx, l.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		holder, duration := "someone-else", int32(3600)
		lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds = &holder, &duration
		lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
		_, err = l.leases.Update(l.ctx, lease, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	taken := time.Now()
	waitUntil(t, "the leader to step down", func() bool { return a.metric(t, "meshd_leader") == 0 })
	t.Logf("stepped down %v after the Lease was taken (retry period 250ms, renew deadline 15s)", time.Since(taken).Round(10*time.Millisecond))
	// The bound leaves a busy machine seconds of slack and is still well
	// below the renew deadline.
	if d := time.Since(taken); d > 10*time.Second {
		t.Errorf("stepped down after %v: want it at the next renewal (250ms), well before the renew deadline (15s)", d)
	}
}

// checkNoStatusWhileStandby changes the route while a does not lead, and
// checks that a writes nothing for it.
func (l *leaseRun) checkNoStatusWhileStandby(t *testing.T, a *replica) {
	t.Helper()
	written := a.metric(t, statusWritten)
	l.mesh.setBackend("r", "missing")
	time.Sleep(time.Second)
	r, err := l.gw.GatewayV1().HTTPRoutes(l.mesh.ns).Get(l.ctx, "r", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Status.Parents {
		for _, c := range p.Conditions {
			if c.ObservedGeneration == r.Generation {
				t.Errorf("status written for generation %d while not leading: %+v", r.Generation, c)
			}
		}
	}
	if w := a.metric(t, statusWritten); w != written {
		t.Errorf("status writes went from %v to %v while not leading", written, w)
	}
}

// releaseLeaseAndCatchUp has the other holder give the Lease up, and checks
// that a leads again, for a second term, and writes the status it missed.
func (l *leaseRun) releaseLeaseAndCatchUp(t *testing.T, a *replica) {
	t.Helper()
	if err := l.leases.Delete(l.ctx, l.name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitLeader(t, []*replica{a}, nil)
	if terms := a.metric(t, "meshd_leader_terms_total"); terms != 2 {
		t.Errorf("meshd_leader_terms_total = %v, want 2", terms)
	}
	l.mesh.waitCondition("r", "ResolvedRefs", metav1.ConditionFalse, "BackendNotFound")
}

// checkCleanStopHandsOver stops the leader a with SIGTERM beside a standby,
// and checks that the standby leads within a retry period rather than a
// lease duration, and writes status.
func (l *leaseRun) checkCleanStopHandsOver(t *testing.T, a *replica) {
	t.Helper()
	b := l.startReplica(t)
	stopped := time.Now()
	a.stop(t)
	waitLeader(t, []*replica{b}, nil)
	handover := time.Since(stopped)
	t.Logf("handover after SIGTERM: %v (lease duration 30s, retry period 250ms)", handover.Round(10*time.Millisecond))
	// It includes a's shutdown, which is slow on a busy machine; waiting
	// for the Lease to expire would take 30 s.
	if handover >= 15*time.Second {
		t.Errorf("handover took %v: the stopped leader did not release the Lease", handover)
	}
	l.mesh.setBackend("r", "web")
	l.mesh.waitCondition("r", "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs")
	b.stop(t)
}
