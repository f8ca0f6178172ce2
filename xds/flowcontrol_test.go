package xds_test

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest"
)

// pingCounter is a client connection that parses the HTTP/2 frames the
// server sends and counts the PINGs the server starts (not its answers
// to the client's).
type pingCounter struct {
	net.Conn
	tee   *io.PipeWriter
	pings atomic.Int64
}

func (c *pingCounter) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.tee.Write(p[:n])
	}
	return n, err
}

// count reads the server's frames from r until it ends.
func (c *pingCounter) count(r io.Reader) {
	fr := http2.NewFramer(io.Discard, r)
	fr.SetMaxReadFrameSize(1 << 24)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			io.Copy(io.Discard, r) // keep the connection's reads flowing
			return
		}
		if p, ok := f.(*http2.PingFrame); ok && !p.IsAck() {
			c.pings.Add(1)
		}
	}
}

// TestNoPingPerRequest: the requests a stream sends (its ACKs) make the
// server send no PING, which gRPC's bandwidth estimation would, a write
// and a read more per push.
func TestNoPingPerRequest(t *testing.T) {
	f := newWalkFixture(t)
	var counter *pingCounter
	dialer := func(ctx context.Context, addr string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		r, w := io.Pipe()
		counter = &pingCounter{Conn: conn, tee: w}
		go counter.count(r)
		t.Cleanup(func() { w.Close() })
		return counter, nil
	}
	cc, err := grpc.NewClient(f.addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithContextDialer(dialer))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	c := xdstest.NewDelta(t, cc, &corev3.Node{Id: "node-1"})
	c.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNamesSubscribe: []string{"a"}})
	c.Ack(recvNames(t, c.Recv, deltaNames, "EDS", "a"))
	for _, addr := range []string{"10.0.0.11:80", "10.0.0.12:80", "10.0.0.13:80", "10.0.0.14:80"} {
		f.eds.Set(cla("a", addr))
		c.Ack(recvNames(t, c.Recv, deltaNames, "EDS change", "a"))
	}
	// One more response: the server writes its frames in order, so any
	// PING the ACKs above made is read before it.
	f.eds.Set(cla("a", "10.0.0.15:80"))
	recvNames(t, c.Recv, deltaNames, "last EDS change", "a")
	if n := counter.pings.Load(); n != 0 {
		t.Fatalf("server sent %d PINGs over 6 requests, want none", n)
	}
}
