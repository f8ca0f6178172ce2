package app

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshd/meshd/internal/xdsclients"
	"github.com/meshd/meshd/sources/multicluster"
)

// eastEchoIP is the echo pod's address in the second remote cluster.
const eastEchoIP = "127.0.0.33"

// TestThreeClusters runs meshd on a local kube-apiserver with two remote
// ones named by --remote-kubeconfig, each with a pod of the echo
// service: a grpc-go client reaches all three; once east's API server
// stops, east's endpoint is flagged stale and still served, while a
// change in west goes through as before; after the stale timeout only
// east's endpoint leaves.
func TestThreeClusters(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	b := xdsclients.StartBackends(t, localEchoIP, remoteEchoIP, eastEchoIP)
	localEnv, local := startKube(t, ctx)
	westEnv, west := startKube(t, ctx)
	eastEnv, east := startKube(t, ctx)
	createEcho(t, ctx, local, b.Port, localEchoIP)
	createEcho(t, ctx, west, b.Port, remoteEchoIP)
	createEcho(t, ctx, east, b.Port, eastEchoIP)
	// The stale timeout leaves time for the steps while east is stale,
	// on a slow machine.
	r, client := startMeshd(t, "mc3-client", "--kubeconfig", localEnv.Kubeconfig, "--cluster-name", "home",
		"--remote-kubeconfig", "west="+westEnv.Kubeconfig, "--remote-kubeconfig", "east="+eastEnv.Kubeconfig,
		"--remote-stale-timeout", "30s", "--remote-stale-grace", "2s")
	all := []string{b.Addr(localEchoIP), b.Addr(remoteEchoIP), b.Addr(eastEchoIP)}
	waitBackends(t, client, "the three clusters' backends", all)
	waitEndpoints(t, r, "each endpoint in its cluster", map[string]string{localEchoIP: "home", remoteEchoIP: "west", eastEchoIP: "east"})

	eastEnv.Stop()
	waitCluster(t, r, "east", multicluster.StateStale)
	waitEndpoints(t, r, "east's endpoint flagged stale, west's not",
		map[string]string{localEchoIP: "home", remoteEchoIP: "west", eastEchoIP: "east stale"})
	checkBackends(t, client, "all three while east is stale", all)
	if err := west.CoreV1().Pods(mcNamespace).Delete(ctx, "echo-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitBackends(t, client, "west's change served while east is stale", []string{all[0], all[2]})
	waitCluster(t, r, "west", multicluster.StateSynced)

	waitCluster(t, r, "east", multicluster.StateExpired)
	waitBackends(t, client, "the local backend alone once east expired", all[:1])
	createPod(t, ctx, west, remoteEchoIP)
	waitBackends(t, client, "west's pod back", all[:2])
}
