package xds_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"golang.org/x/net/http2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest"
)

// freeAddr returns a loopback address no one listens on (as of now).
func freeAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

// clusterServer returns a server of one cluster collection holding "a".
func clusterServer(opts ...xds.Option) (*krt.Graph, *xds.Server) {
	g := krt.NewGraph()
	cds := staticProtos[*clusterv3.Cluster](g, "clusters")
	cds.Set(edsCluster("a"))
	srv := xds.New(g, []xds.Source{xds.NewSource(xds.ClusterType, cds,
		func(c *clusterv3.Cluster) (string, proto.Message) { return c.GetName(), c })},
		append([]xds.Option{xds.WithDebounce(0)}, opts...)...)
	return g, srv
}

// Run listens where WithAddress says, and fails, naming the address, when
// it cannot.
func TestWithAddress(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // should runOnFreeAddr fail the test
	addr, stop := runOnFreeAddr(t, ctx)
	defer func() {
		cancel()
		stop()
	}()
	c := xdstest.NewSotW(t, dial(t, addr), &corev3.Node{Id: "n"})
	c.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType})
	if got := names(t, c.Recv()); len(got) != 1 || got[0] != "a" {
		t.Errorf("clusters %v served on %s", got, addr)
	}

	// A second server on the same address cannot listen.
	_, busy := clusterServer(xds.WithAddress(addr))
	err := busy.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), addr) {
		t.Errorf("Run on a taken address: %v, want an error naming %s", err, addr)
	}
}

// runOnFreeAddr runs a cluster server with WithAddress set to a free
// loopback address until ctx ends, and returns once it listens there (a
// client dialing before that would be refused). stop waits for the server
// and its graph to return. A port freeAddr found can be taken by another
// process before Run listens on it: then it tries another.
func runOnFreeAddr(t *testing.T, ctx context.Context) (addr string, stop func()) {
	t.Helper()
	for range 5 {
		addr = freeAddr(t)
		g, srv := clusterServer(xds.WithAddress(addr))
		graphDone, runDone := make(chan error, 1), make(chan error, 1)
		go func() { graphDone <- g.Run(ctx) }()
		go func() { runDone <- srv.Run(ctx) }()
		stop = func() {
			if err := <-runDone; err != nil {
				t.Errorf("Run: %v", err)
			}
			<-graphDone
		}
		select {
		case <-srv.Ready():
			return addr, stop
		case err := <-runDone:
			if !errors.Is(err, syscall.EADDRINUSE) {
				t.Fatalf("Run on %s: %v", addr, err)
			}
			// The graph runs until ctx ends; stop is not called.
			t.Logf("%s was taken before Run listened: %v", addr, err)
		case <-time.After(20 * time.Second):
			t.Fatalf("server on %s not ready after 20s", addr)
		}
	}
	t.Fatal("no free address found in 5 tries")
	return "", nil
}

// WithMaxConcurrentStreams limits the streams of one connection: a second
// stream waits until the first ends, while another connection is served.
func TestWithMaxConcurrentStreams(t *testing.T) {
	f := newFixture(t, xds.WithMaxConcurrentStreams(1))
	f.cds.Set(edsCluster("a"))
	ads := discovery.NewAggregatedDiscoveryServiceClient(dial(t, f.addr))
	req := &discovery.DiscoveryRequest{Node: &corev3.Node{Id: "n"}, TypeUrl: xds.ClusterType}
	first, cancelFirst := context.WithCancel(context.Background())
	defer cancelFirst()
	if err := openAndRecv(first, ads, req); err != nil {
		t.Fatalf("first stream: %v", err)
	}

	waiting, cancelWaiting := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancelWaiting()
	if err := openAndRecv(waiting, ads, req); status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("second stream on the connection: %v, want it to wait past its deadline", err)
	}
	other, cancelOther := context.WithTimeout(context.Background(), recvTimeout)
	defer cancelOther()
	otherADS := discovery.NewAggregatedDiscoveryServiceClient(dial(t, f.addr))
	if err := openAndRecv(other, otherADS, req); err != nil {
		t.Errorf("stream on another connection: %v", err)
	}

	cancelFirst()
	if err := openAndRecv(other, ads, req); err != nil {
		t.Errorf("stream after the first ended: %v", err)
	}
}

// openAndRecv opens a SotW stream, sends req and waits for a response.
// The stream lives as long as ctx.
func openAndRecv(ctx context.Context, ads discovery.AggregatedDiscoveryServiceClient, req *discovery.DiscoveryRequest) error {
	stream, err := ads.StreamAggregatedResources(ctx)
	if err != nil {
		return err
	}
	if err := stream.Send(req); err != nil {
		return err
	}
	_, err = stream.Recv()
	return err
}

// WithKeepalive sets both halves of keepalive: a client pinging more often
// than the policy allows is sent GOAWAY "too_many_pings" (as with the
// defaults), one within it is answered, and the server pings an idle
// connection after the Time it is given. The client is a raw HTTP/2
// connection, as a grpc-go client will not ping more than every 10s.
func TestWithKeepalive(t *testing.T) {
	server := keepalive.ServerParameters{Time: time.Second, Timeout: 5 * time.Second}
	for _, tc := range []struct {
		name       string
		opts       []xds.Option
		wantGoAway bool
	}{
		{name: "default", wantGoAway: true},
		{name: "strict", opts: []xds.Option{xds.WithKeepalive(server,
			keepalive.EnforcementPolicy{MinTime: time.Hour, PermitWithoutStream: true})}, wantGoAway: true},
		{name: "permissive", opts: []xds.Option{xds.WithKeepalive(server,
			keepalive.EnforcementPolicy{MinTime: time.Microsecond, PermitWithoutStream: true})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.opts...)
			got := pingFlood(t, f.addr, 5)
			if tc.wantGoAway {
				if got.goAway == nil || *got.goAway != http2.ErrCodeEnhanceYourCalm || got.goAwayDebug != "too_many_pings" {
					t.Errorf("after %d pings: %+v, want GOAWAY too_many_pings", got.acks, got)
				}
				return
			}
			if got.goAway != nil || got.acks != 5 || !got.serverPinged {
				t.Errorf("got %+v, want 5 acks, a server ping and no GOAWAY", got)
			}
		})
	}
}

type pingResult struct {
	goAway       *http2.ErrCode // nil: no GOAWAY came
	goAwayDebug  string
	acks         int
	serverPinged bool
}

// pingFlood opens an HTTP/2 connection to addr, pings it n times 2ms
// apart, and reads until the server sends GOAWAY, or has acked every ping
// and pinged back.
func pingFlood(t *testing.T, addr string, n int) pingResult {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(recvTimeout))
	fr := http2.NewFramer(conn, conn)
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		time.Sleep(2 * time.Millisecond)
		if err := fr.WritePing(false, [8]byte{byte(i + 1)}); err != nil {
			t.Fatalf("ping %d: %v", i, err)
		}
	}
	var res pingResult
	for res.acks < n || !res.serverPinged {
		frame, err := fr.ReadFrame()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				t.Logf("read: %v", err)
			}
			return res
		}
		switch frame := frame.(type) {
		case *http2.GoAwayFrame:
			// The framer reuses the frame's buffer: keep copies.
			res.goAway, res.goAwayDebug = &frame.ErrCode, string(frame.DebugData())
			return res
		case *http2.SettingsFrame:
			if !frame.IsAck() {
				fr.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if frame.IsAck() {
				res.acks++
			} else {
				res.serverPinged = true
				fr.WritePing(true, frame.Data)
			}
		}
	}
	return res
}
