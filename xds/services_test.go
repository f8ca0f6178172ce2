package xds_test

import (
	"context"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/meshd/meshd/xds"
)

// TestWithServices serves another gRPC service on the xDS listener, beside
// ADS, as meshd serves its CA.
func TestWithServices(t *testing.T) {
	hs := health.NewServer()
	f := newFixture(t, xds.WithServices(func(r grpc.ServiceRegistrar) { healthpb.RegisterHealthServer(r, hs) }))
	cc := dial(t, f.addr)
	resp, err := healthpb.NewHealthClient(cc).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health %s", resp.Status)
	}
	// ADS still answers on the same connection.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := discovery.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType}); err != nil {
		t.Fatal(err)
	}
	if r, err := s.Recv(); err != nil || r.GetTypeUrl() != xds.ClusterType {
		t.Fatalf("ADS answered %q, %v", r.GetTypeUrl(), err)
	}
}
