package xdsclients

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The methods a backend serves, on any service name. Every other method
// answers like Echo.
const (
	// MethodEcho answers with the backend's address, host:port.
	MethodEcho = "Echo"
	// MethodSlow answers like Echo after SlowDelay, unless the call ends
	// first.
	MethodSlow = "Slow"
	// MethodFlaky fails every other call it gets, on whichever backend,
	// with UNAVAILABLE, and answers the others like Echo.
	MethodFlaky = "Flaky"
)

// SlowDelay is how long MethodSlow takes.
const SlowDelay = 3 * time.Second

// Backends are gRPC servers on loopback addresses sharing one port, as
// the pods of a Service share their target port.
type Backends struct {
	// Port is the port every backend listens on.
	Port int
	// flaky counts MethodFlaky calls across the backends.
	flaky atomic.Int64
}

// StartBackends serves the methods above on each of ips (loopback
// addresses such as 127.0.0.11), on one free port, until the test ends.
// It skips the test when the addresses cannot be bound.
func StartBackends(t testing.TB, ips ...string) *Backends {
	t.Helper()
	b := &Backends{}
	for _, ip := range ips {
		lis, err := net.Listen("tcp", net.JoinHostPort(ip, fmt.Sprint(b.Port)))
		if err != nil {
			t.Skipf("listen on %s: %v (loopback aliases needed)", ip, err)
		}
		b.Port = lis.Addr().(*net.TCPAddr).Port
		s := grpc.NewServer(grpc.ForceServerCodecV2(rawCodec{}), grpc.UnknownServiceHandler(b.handler(lis.Addr().String())))
		done := make(chan struct{})
		go func() { defer close(done); _ = s.Serve(lis) }()
		t.Cleanup(func() { s.Stop(); <-done })
	}
	return b
}

// Addr is the address a backend on ip answers with.
func (b *Backends) Addr(ip string) string { return net.JoinHostPort(ip, fmt.Sprint(b.Port)) }

func (b *Backends) handler(addr string) grpc.StreamHandler {
	return func(_ any, stream grpc.ServerStream) error {
		var req []byte
		if err := stream.RecvMsg(&req); err != nil {
			return err
		}
		method, _ := grpc.Method(stream.Context())
		switch method[strings.LastIndexByte(method, '/')+1:] {
		case MethodSlow:
			if err := sleep(stream.Context(), SlowDelay); err != nil {
				return err
			}
		case MethodFlaky:
			if b.flaky.Add(1)%2 == 1 {
				return status.Error(codes.Unavailable, "flaky: failing every other call")
			}
		}
		return stream.SendMsg([]byte(addr))
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
}
