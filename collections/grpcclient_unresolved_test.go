package collections

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestGRPCClientUnresolvedBackendShare splits a service 50/50 between a
// backend that exists and one that does not, and sends RPCs with grpc-go's
// own xDS client: about half must fail with UNAVAILABLE (the missing
// backend's share), the rest reach the named backend only, never the
// parent service's own pods, which a dropped route would fall back to.
func TestGRPCClientUnresolvedBackendShare(t *testing.T) {
	port := serveHealth(t, "127.0.0.21", "127.0.0.22")
	g, in, m := newTestModel()
	grpcPort := svcPort("grpc", 7000, port)
	in.Set(
		service("ns", "front", map[string]string{"app": "front"}, grpcPort),
		service("ns", "echo", map[string]string{"app": "echo"}, grpcPort),
	)
	in.Set(
		pod("ns", "echo-0", "127.0.0.21", map[string]string{"app": "echo"}, true),
		pod("ns", "front-0", "127.0.0.22", map[string]string{"app": "front"}, true),
	)
	in.Set(httpRoute("ns", "split", serviceParent("front", nil), gatewayv1.HTTPRouteRule{
		BackendRefs: []gatewayv1.HTTPBackendRef{backend("echo", 7000, 50), backend("echo-typo", 7000, 50)},
	}))
	if st, _ := m.RouteStatus.Get("HTTPRoute/ns/split"); statusString(st) != "ns/front:0 Accepted=true(Accepted) ResolvedRefs=false(BackendNotFound)" {
		t.Fatalf("status %s", statusString(st))
	}
	ads, resolver := newADSResolver(t, g, m)
	conn, err := grpc.NewClient("xds:///front.ns.svc.cluster.local:7000",
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithResolvers(resolver))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const rpcs = 400
	hits, failed := sendChecks(t, ads, conn, rpcs)
	if hits["127.0.0.21"] != rpcs-failed {
		t.Errorf("RPCs reached %v; want only echo's pod 127.0.0.21", hits)
	}
	// Binomial, n=400, p=1/2: the standard deviation is 10 RPCs.
	if failed < rpcs*35/100 || failed > rpcs*65/100 {
		t.Errorf("%d of %d RPCs failed, want about half", failed, rpcs)
	}
	if nacks := ads.nackList(); len(nacks) > 0 {
		t.Errorf("the gRPC client rejected resources: %q", nacks)
	}
	t.Logf("%d of %d RPCs failed with UNAVAILABLE; the rest reached %v", failed, rpcs, hits)
}

// sendChecks waits for one health check over conn to succeed, then sends n
// more and returns where those that succeeded went and how many failed,
// all with code Unavailable.
func sendChecks(t *testing.T, ads *staticADS, conn *grpc.ClientConn, n int) (hits map[string]int, failed int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	check := func() (string, error) {
		var p peer.Peer
		_, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Peer(&p))
		if err != nil {
			return "", err
		}
		host, _, _ := net.SplitHostPort(p.Addr.String())
		return host, nil
	}
	// Until the first RPC succeeds, failures may be the channel starting.
	for {
		if _, err := check(); err == nil {
			break
		} else if ctx.Err() != nil {
			t.Fatalf("no RPC succeeded: %v (NACKs: %q)", err, ads.nackList())
		}
		time.Sleep(10 * time.Millisecond) // not a busy loop on a shared machine
	}
	hits = map[string]int{}
	for range n {
		host, err := check()
		if err != nil {
			if status.Code(err) != codes.Unavailable {
				t.Fatalf("RPC failed with %v, want code Unavailable", err)
			}
			failed++
			continue
		}
		hits[host]++
	}
	return hits, failed
}
