package xds_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest"
)

// TestShutdown checks that ending Serve's context ends open streams with
// Unavailable, and that the registry keeps the disconnected proxy, flagged
// with the reason.
func TestShutdown(t *testing.T) {
	g := krt.NewGraph()
	eds := krt.NewStatic[*endpointCLA](g, krt.WithKey(func(c *endpointCLA) string { return c.name }))
	eds.Set(&endpointCLA{name: "a"})
	srv := xds.New(g, []xds.Source{xds.NewSource(xds.EndpointType, eds, func(c *endpointCLA) (string, proto.Message) {
		return c.name, cla(c.name, "10.0.0.1:80")
	})}, xds.WithDebounce(0))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	graphDone, serveDone := make(chan error, 1), make(chan error, 1)
	go func() { graphDone <- g.Run(ctx) }()
	serveCtx, stop := context.WithCancel(ctx)
	go func() { serveDone <- srv.Serve(serveCtx, lis) }()

	cc := dial(t, lis.Addr().String())
	stream := subscribedEDS(t, ctx, cc, "a")
	stop()
	if _, err := stream.Recv(); status.Code(err) != codes.Unavailable {
		t.Fatalf("Recv after shutdown: %v, want Unavailable", err)
	}
	if err := <-serveDone; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	ps := srv.Proxies()
	if len(ps) != 1 || ps[0].Connected || ps[0].DisconnectedAt.IsZero() {
		t.Fatalf("proxies after shutdown = %+v", ps)
	}
	if ps[0].CloseReason != xds.CloseServerShutdown {
		t.Errorf("close reason after shutdown = %q, want %q", ps[0].CloseReason, xds.CloseServerShutdown)
	}
	if err := srv.Serve(ctx, lis); !errors.Is(err, xds.ErrServing) {
		t.Fatalf("second Serve: %v, want ErrServing", err)
	}
	cancel()
	<-graphDone
}

// subscribedEDS opens a SotW stream on cc for the life of ctx, subscribes
// it to the endpoints of names and returns it once the first response
// has arrived.
func subscribedEDS(t *testing.T, ctx context.Context, cc grpc.ClientConnInterface, names ...string) discovery.AggregatedDiscoveryService_StreamAggregatedResourcesClient {
	t.Helper()
	stream, err := discovery.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: names}); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	return stream
}

// endpointCLA is a non-proto item turned into a proto by the source's
// function.
type endpointCLA struct{ name string }

// TestRetention checks that disconnected proxies are kept for the
// retention period and at most the given number.
func TestRetention(t *testing.T) {
	f := newFixture(t, xds.WithRetention(time.Hour, 2))
	f.eds.Set(cla("a", "10.0.0.1:80"))
	cc := dial(t, f.addr)
	for i := range 3 {
		ctx, cancel := context.WithCancel(context.Background())
		subscribedEDS(t, ctx, cc, "a")
		cancel()
		waitFor(t, "the disconnection", func() bool {
			n := 0
			for _, p := range f.srv.Proxies() {
				if !p.Connected {
					n++
				}
			}
			return n == min(i+1, 2) && f.srv.Stats().ConnectedProxies == 0
		})
	}
	var ids []uint64
	for _, p := range f.srv.Proxies() {
		ids = append(ids, p.ID)
	}
	if !slices.Equal(ids, []uint64{2, 3}) {
		t.Fatalf("retained proxies %v, want the last two [2 3]", ids)
	}
	if _, err := f.srv.ConfigDump(1); !errors.Is(err, xds.ErrUnknownProxy) {
		t.Fatalf("ConfigDump of a pruned proxy: %v", err)
	}
	dump, err := f.srv.ConfigDump(3)
	if err != nil || len(dump.Types[xds.EndpointType]) != 1 {
		t.Fatalf("ConfigDump of a retained proxy: %v %v", dump, err)
	}
}

// TestMutualTLS serves over mTLS: a client with a certificate signed by the
// client CA is served; one without a certificate is refused.
func TestMutualTLS(t *testing.T) {
	dir := t.TempDir()
	ca := xdstest.NewCA(t)
	certFile, keyFile := xdstest.WriteKeyPair(t, dir, "server", ca.Server(t))
	f := newFixture(t, xds.WithTLS(certFile, keyFile, ca.WriteCA(t, dir)))
	f.eds.Set(cla("a", "10.0.0.1:80"))

	for _, tc := range []struct {
		name  string
		certs []tls.Certificate
		ok    bool
	}{
		{"client certificate", []tls.Certificate{ca.Client(t)}, true},
		{"no client certificate", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			creds := credentials.NewTLS(ca.ClientConfig(tc.certs...))
			cc, err := grpc.NewClient(f.addr, grpc.WithTransportCredentials(creds))
			if err != nil {
				t.Fatal(err)
			}
			defer cc.Close()
			ctx, cancel := context.WithTimeout(context.Background(), recvTimeout)
			defer cancel()
			_, err = func() (*discovery.DiscoveryResponse, error) {
				stream, err := discovery.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(ctx)
				if err != nil {
					return nil, err
				}
				if err := stream.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{"a"}}); err != nil {
					return nil, err
				}
				return stream.Recv()
			}()
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want success %v", err, tc.ok)
			}
		})
	}
}

// TestMaxConnections checks that a connection beyond the limit is refused,
// and served once an earlier one closes.
func TestMaxConnections(t *testing.T) {
	f := newFixture(t, xds.WithMaxConnections(1))
	f.eds.Set(cla("a", "10.0.0.1:80"))
	first := dial(t, f.addr)
	c1 := xdstest.NewSotW(t, first, &corev3.Node{Id: "node-1"})
	c1.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{"a"}})
	c1.Recv()

	second, err := grpc.NewClient(f.addr, grpc.WithTransportCredentials(insecureCreds()))
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	second.Connect()
	ctx, cancel := context.WithTimeout(context.Background(), recvTimeout)
	defer cancel()
	for s := second.GetState(); s != connectivity.TransientFailure; s = second.GetState() {
		if !second.WaitForStateChange(ctx, s) {
			t.Fatalf("second connection never refused: %v", s)
		}
	}
	if n := f.srv.Stats().LimitExceeded[xds.LimitConnections]; n == 0 {
		t.Errorf("LimitExceeded[%s] = 0 after a refused connection", xds.LimitConnections)
	}
	first.Close()
	stream, err := discovery.NewAggregatedDiscoveryServiceClient(second).StreamAggregatedResources(ctx, grpc.WaitForReady(true))
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	if r, err := stream.Recv(); err != nil || len(r.Resources) != 1 {
		t.Fatalf("second connection got %v, %v", r, err)
	}
}

// TestRetainedNamesBound: disconnected proxies are dropped, oldest first,
// once together they hold more names than WithMaxRetainedNames, however
// many WithRetention would keep — a client reconnecting in a loop with
// large subscriptions cannot make the registry grow without bound.
func TestRetainedNamesBound(t *testing.T) {
	f := newFixture(t, xds.WithRetention(time.Hour, 100), xds.WithMaxRetainedNames(100))
	f.eds.Set(cla("a", "10.0.0.1:80"))
	cc := dial(t, f.addr)
	names := []string{"a"}
	for i := range 59 {
		names = append(names, "missing-"+strconv.Itoa(i))
	}
	var retained []uint64
	for i := range 3 {
		ctx, cancel := context.WithCancel(context.Background())
		// 60 names subscribed, one held: 61 per stream, two over 100.
		subscribedEDS(t, ctx, cc, names...)
		cancel()
		waitFor(t, "the disconnection", func() bool {
			retained = retained[:0]
			for _, p := range f.srv.Proxies() {
				if !p.Connected {
					retained = append(retained, p.ID)
				}
			}
			return f.srv.Stats().ConnectedProxies == 0 && len(retained) > 0 && retained[len(retained)-1] == uint64(i+1)
		})
		if len(retained) != 1 {
			t.Fatalf("after stream %d left: retained %v, want only the last (two hold 122 names > 100)", i+1, retained)
		}
	}
	if _, err := f.srv.ConfigDump(3); err != nil {
		t.Fatalf("ConfigDump of the retained proxy: %v", err)
	}
}
