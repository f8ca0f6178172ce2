// Command grpc-client is a proxyless gRPC client of meshd: grpc-go
// resolves its xds:/// target through meshd over ADS (listener, route
// configuration, cluster, endpoints) and balances its RPCs over the
// endpoints meshd names, with no sidecar. Each RPC is a health check, so
// any gRPC server with the standard health service will do as a backend;
// -serve starts one.
//
//	go run ./cmd/meshd --config-dir examples/grpc-client/mesh     # from the repository root
//	cd examples/grpc-client
//	go run . -serve 127.0.0.1:50051 &                             # the one backend mesh/ names
//	GRPC_XDS_BOOTSTRAP=bootstrap.json go run . -target xds:///greeter.default.svc.cluster.local:50051
//
// The module is separate from meshd's, as a client of the mesh needs
// nothing of meshd but its xDS server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
	_ "google.golang.org/grpc/xds" // registers the xds:/// resolver and balancers
)

func main() {
	target := flag.String("target", "xds:///greeter.default.svc.cluster.local:50051", "`URI` to dial; xds:/// resolves through the bootstrap's xDS server")
	n := flag.Int("n", 3, "`count` of RPCs to make")
	timeout := flag.Duration("timeout", 20*time.Second, "`duration` to wait for all RPCs, xDS resolution included")
	serve := flag.String("serve", "", "serve the gRPC health service on `host:port` instead of being a client")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	if *serve != "" {
		err = runBackend(ctx, *serve, os.Stdout)
	} else {
		ctx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		err = runClient(ctx, *target, *n, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "grpc-client:", err)
		os.Exit(1)
	}
}

// runClient makes n health checks against target, printing who answered
// each.
func runClient(ctx context.Context, target string, n int, out io.Writer) error {
	cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("dial %s: %w", target, err)
	}
	defer cc.Close()
	client := healthpb.NewHealthClient(cc)
	for i := range n {
		var p peer.Peer
		// WaitForReady: the first RPC waits while xDS resolves the target.
		resp, err := client.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true), grpc.Peer(&p))
		if err != nil {
			return fmt.Errorf("rpc %d to %s: %w", i+1, target, err)
		}
		fmt.Fprintf(out, "rpc %d: %s from %s\n", i+1, resp.GetStatus(), p.Addr)
	}
	return nil
}

// runBackend serves the gRPC health service on addr until ctx ends.
func runBackend(ctx context.Context, addr string, out io.Writer) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	s := grpc.NewServer()
	healthpb.RegisterHealthServer(s, health.NewServer())
	fmt.Fprintf(out, "serving on %s\n", l.Addr())
	go func() {
		<-ctx.Done()
		s.GracefulStop()
	}()
	if err := s.Serve(l); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("serve %s: %w", addr, err)
	}
	return nil
}
