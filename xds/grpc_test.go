package xds_test

import (
	"context"
	"net"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/meshd/meshd/xds/xdstest"
)

// backend is a real gRPC server (the health service) on a loopback
// address of its own.
type backend struct {
	addr string
}

func startBackend(t testing.TB, ip string) backend {
	t.Helper()
	lis, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatalf("listen on %s: %v", ip, err)
	}
	serveHealth(t, lis)
	return backend{addr: lis.Addr().String()}
}

// serveHealth serves the gRPC health service on lis until the test ends.
func serveHealth(t testing.TB, lis net.Listener) {
	s := grpc.NewServer()
	healthpb.RegisterHealthServer(s, health.NewServer())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Serve(lis)
	}()
	t.Cleanup(func() { s.Stop(); <-done })
}

// xdsClient dials target through grpc-go's xDS resolver, bootstrapped to
// the server at addr.
func xdsClient(t testing.TB, addr, nodeID, target string) *grpc.ClientConn {
	t.Helper()
	node := &corev3.Node{Id: nodeID, Metadata: &structpb.Struct{Fields: map[string]*structpb.Value{"test": structpb.NewStringValue("grpc_test")}}}
	return xdstest.DialXDS(t, xdstest.Bootstrap(t, node, addr), target)
}

// call makes one RPC and returns the address of the backend that served it.
func call(t testing.TB, cc *grpc.ClientConn) string {
	t.Helper()
	addr, err := tryCall(cc)
	if err != nil {
		t.Fatalf("RPC: %v", err)
	}
	return addr
}

func tryCall(cc *grpc.ClientConn) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), recvTimeout)
	defer cancel()
	var p peer.Peer
	if _, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Peer(&p), grpc.WaitForReady(true)); err != nil {
		return "", err
	}
	return p.Addr.String(), nil
}

// spread makes n RPCs and counts them per backend.
func spread(t testing.TB, cc *grpc.ClientConn, n int) map[string]int {
	t.Helper()
	got := map[string]int{}
	for range n {
		got[call(t, cc)]++
	}
	return got
}

// reachAll makes RPCs until each of addrs has served one, failing if
// another address serves one. Round robin picks only connected backends,
// so the first RPCs may all go to the first backend to connect.
func reachAll(t testing.TB, cc *grpc.ClientConn, addrs ...string) {
	t.Helper()
	want := map[string]bool{}
	for _, a := range addrs {
		want[a] = true
	}
	seen := map[string]int{}
	deadline := time.Now().Add(recvTimeout)
	for len(seen) < len(want) {
		if time.Now().After(deadline) {
			t.Fatalf("RPCs reached %v, want each of %v", seen, addrs)
		}
		a := call(t, cc)
		if !want[a] {
			t.Fatalf("RPC reached %s, want one of %v", a, addrs)
		}
		seen[a]++
	}
}

// converge makes RPCs until n in a row succeed and satisfy ok: the client
// has applied the pushed config. While grpc-go switches to a route naming a
// cluster it has not resolved yet, its picker may fail an RPC with
// "unknown cluster selected"; such failures count as not converged.
func converge(t testing.TB, cc *grpc.ClientConn, n int, what string, ok func(addr string) bool) {
	t.Helper()
	deadline := time.Now().Add(recvTimeout)
	for run := 0; run < n; {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		if addr, err := tryCall(cc); err == nil && ok(addr) {
			run++
		} else {
			run = 0
		}
	}
}

// TestGRPCProxyless serves hand-built resources to grpc-go's own xDS
// client and checks where its RPCs go as endpoints and weights change.
func TestGRPCProxyless(t *testing.T) {
	const target = "echo.default.svc.cluster.local:7070"
	const clusterA = "outbound|7070|v1|echo.default.svc.cluster.local"
	const clusterB = "outbound|7070|v2|echo.default.svc.cluster.local"
	f := newFixture(t)
	a1, a2, a3 := startBackend(t, "127.0.0.11"), startBackend(t, "127.0.0.12"), startBackend(t, "127.0.0.13")
	b1 := startBackend(t, "127.0.0.14")
	f.cds.Set(edsCluster(clusterA), edsCluster(clusterB))
	f.eds.Set(cla(clusterA, a1.addr, a2.addr, a3.addr), cla(clusterB, b1.addr))
	f.rds.Set(weightedRoute(target, target, []string{clusterA}, []uint32{1}))
	f.lds.Set(apiListener(target, target))

	cc := xdsClient(t, f.addr, "grpc-client-1", target)

	// Round robin reaches every endpoint of A, and only those.
	reachAll(t, cc, a1.addr, a2.addr, a3.addr)

	// Removing an endpoint moves its traffic to the others; adding it back
	// brings traffic back.
	f.eds.Set(cla(clusterA, a1.addr, a2.addr))
	converge(t, cc, 20, "a3 drained", func(addr string) bool { return addr != a3.addr })
	if got := spread(t, cc, 30); got[a3.addr] != 0 || got[a1.addr] == 0 || got[a2.addr] == 0 {
		t.Fatalf("after removing a3: %v", got)
	}
	f.eds.Set(cla(clusterA, a1.addr, a2.addr, a3.addr))
	converge(t, cc, 1, "a3 back", func(addr string) bool { return addr == a3.addr })

	// A 90/10 weighted route splits about 90/10.
	f.rds.Set(weightedRoute(target, target, []string{clusterA, clusterB}, []uint32{90, 10}))
	converge(t, cc, 1, "traffic to B", func(addr string) bool { return addr == b1.addr })
	const n = 1000
	got := spread(t, cc, n)
	// 10% of 1000 has a standard deviation of about 9.5.
	if toB := got[b1.addr]; toB < 50 || toB > 160 {
		t.Fatalf("90/10 split sent %d of %d RPCs to B: %v", toB, n, got)
	}

	// 0/100 moves all traffic to B.
	f.rds.Set(weightedRoute(target, target, []string{clusterA, clusterB}, []uint32{0, 100}))
	converge(t, cc, 20, "all traffic to B", func(addr string) bool { return addr == b1.addr })
	if got := spread(t, cc, 100); got[b1.addr] != 100 {
		t.Fatalf("0/100 split: %v", got)
	}

	// The registry shows the client, its subscriptions and its ACKs.
	p := proxyByNode(t, f.srv, "grpc-client-1")
	if p.Metadata["test"] != "grpc_test" || p.Kind != "sotw" {
		t.Fatalf("proxy = %+v", p)
	}
	for _, typ := range []string{"type.googleapis.com/envoy.config.listener.v3.Listener", "type.googleapis.com/envoy.config.cluster.v3.Cluster"} {
		if ts := p.Types[typ]; ts.Acks == 0 || ts.Nacks != 0 {
			t.Fatalf("%s: %+v", typ, ts)
		}
	}
}
