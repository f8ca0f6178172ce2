package main

import (
	"context"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
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
	kube := kubernetes.NewForConfigOrDie(env.Config)
	gw := gatewayclient.NewForConfigOrDie(env.Config)
	mesh := newFleetMesh(t, ctx, kube, gw, 7000)
	mesh.service("web")
	mesh.route("r", "web", "web")

	// An administrator's kubeconfig and a Lease of the test's own, so
	// that this test does not depend on TestFleet's.
	lease := "lease-lost-" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	// A lease duration well above the handover expected, so a handover
	// that waited for the Lease to expire shows; and a renew deadline well
	// above the step-down expected, so one that waited for it shows.
	flags := []string{"--leader-elect-resource-namespace", "default", "--leader-elect-resource-name", lease,
		"--leader-elect-lease-duration", "10s", "--leader-elect-renew-deadline", "5s"}
	a := startReplica(t, env.Kubeconfig, flags...)
	a.waitReady(t)
	waitLeader(t, []*replica{a}, nil)
	mesh.waitCondition("r", "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs")

	// Another holder takes the Lease, as a replica would that believes
	// the leader's term over (a partition, a paused process).
	leases := kube.CoordinationV1().Leases("default")
	l, err := leases.Get(ctx, lease, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	holder, duration := "someone-else", int32(3600)
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds = &holder, &duration
	l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
	if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	taken := time.Now()
	waitUntil(t, "the leader to step down", func() bool { return a.metric(t, "meshd_leader") == 0 })
	t.Logf("stepped down %v after the Lease was taken (retry period 250ms, renew deadline 5s)", time.Since(taken).Round(10*time.Millisecond))
	// It stops on seeing the new holder, at its next renewal, not once
	// the renew deadline has passed.
	if d := time.Since(taken); d > 3*time.Second {
		t.Errorf("stepped down after %v: want it at the next renewal (250ms), well before the renew deadline (5s)", d)
	}

	// While it does not lead, a route change is not written.
	written := a.metric(t, `meshd_route_status_writes_total{result="written"}`)
	mesh.setBackend("r", "missing")
	time.Sleep(time.Second)
	r, err := gw.GatewayV1().HTTPRoutes(mesh.ns).Get(ctx, "r", metav1.GetOptions{})
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
	if w := a.metric(t, `meshd_route_status_writes_total{result="written"}`); w != written {
		t.Errorf("status writes went from %v to %v while not leading", written, w)
	}

	// The other holder gives the Lease up: the replica leads again, for a
	// second term, and writes the status it missed.
	if err := leases.Delete(ctx, lease, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitLeader(t, []*replica{a}, nil)
	if terms := a.metric(t, "meshd_leader_terms_total"); terms != 2 {
		t.Errorf("meshd_leader_terms_total = %v, want 2", terms)
	}
	mesh.waitCondition("r", "ResolvedRefs", metav1.ConditionFalse, "BackendNotFound")

	// A clean stop hands over at once.
	b := startReplica(t, env.Kubeconfig, flags...)
	b.waitReady(t)
	stopped := time.Now()
	a.stop(t)
	waitLeader(t, []*replica{b}, nil)
	handover := time.Since(stopped)
	t.Logf("handover after SIGTERM: %v (lease duration 10s, retry period 250ms)", handover.Round(10*time.Millisecond))
	if handover >= 5*time.Second {
		t.Errorf("handover took %v: the stopped leader did not release the Lease", handover)
	}
	mesh.setBackend("r", "web")
	mesh.waitCondition("r", "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs")
	b.stop(t)
}
