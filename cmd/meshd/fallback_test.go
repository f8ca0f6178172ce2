package main

import (
	"context"
	"testing"
	"time"
)

// TestFleetFallback covers the other way a proxy can reach several
// replicas: a grpc-go bootstrap that lists two servers (xDS server
// fallback, gRFC A71). grpc-go falls back only for resources it has not
// received: a client holding its config keeps it, and keeps serving RPCs,
// while it waits for its primary; a client that starts while the primary
// is down comes up from the second server. When the primary returns, the
// first client reconnects to it and converges on the config changed in
// the meantime.
func TestFleetFallback(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	env := kubeEnv(t)
	echoIP, canaryIP := "127.0.0.43", "127.0.0.44"
	port := startHealthBackends(t, echoIP, canaryIP)
	mesh := newFleetMesh(t, ctx, env.Config, port)
	mesh.service("echo")
	mesh.service("canary")
	mesh.pod("echo-0", "echo", echoIP)
	mesh.pod("canary-0", "canary", canaryIP)
	mesh.route("r", "echo", "echo")

	lease := uniqueName("fallback-")
	flags := []string{"--leader-elect-resource-namespace", "default", "--leader-elect-resource-name", lease}
	primary, secondary := startReplica(t, env.Kubeconfig, flags...), startReplica(t, env.Kubeconfig, flags...)
	primary.waitReady(t)
	secondary.waitReady(t)
	servers := []string{primary.xds, secondary.xds}
	echo := "echo." + mesh.ns + ".svc.cluster.local:7000"
	canary := "canary." + mesh.ns + ".svc.cluster.local:7000"

	first := xdsClientConn(t, servers, "first", echo)
	converge(t, first, "RPCs to echo", func(ip string) bool { return ip == echoIP })
	if !primary.hasProxy(t, "first") || secondary.hasProxy(t, "first") {
		t.Fatal("the client is not connected to its primary only")
	}

	primary.kill(t)
	mesh.setBackend("r", "canary")
	// The config the client holds keeps serving.
	if ip, err := rpc(first, 2*time.Second); err != nil || ip != echoIP {
		t.Fatalf("RPC with the primary down: %s, %v; want %s from the held config", ip, err, echoIP)
	}

	// A client starting now falls back to the second server.
	second := xdsClientConn(t, servers, "second", canary)
	converge(t, second, "RPCs to canary through the fallback server", func(ip string) bool { return ip == canaryIP })
	if !secondary.hasProxy(t, "second") {
		t.Fatal("the new client is not connected to the fallback server")
	}

	// The primary returns; the first client reconnects and takes the
	// change made while it was away.
	primary.restart(t)
	primary.waitReady(t)
	converge(t, first, "the first client moved to canary after its primary returned", func(ip string) bool { return ip == canaryIP })
	if !primary.hasProxy(t, "first") {
		t.Errorf("the first client is not back on its primary")
	}
	for _, r := range []*replica{primary, secondary} {
		r.stop(t)
	}
}
