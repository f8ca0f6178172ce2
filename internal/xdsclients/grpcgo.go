package xdsclients

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/xds"
)

var grpcGo = Implementation{
	Name:    "grpc-go",
	Version: func() string { return "google.golang.org/grpc " + grpcGoVersion() },
	Install: func() error { return nil }, // built in
	Start: func(t testing.TB, bootstrap []byte) Client {
		t.Helper()
		// A resolver of its own: a client pool, and so an xDS stream and
		// node, of its own, as a fresh process would have.
		r, err := xds.NewXDSResolverWithConfigForTesting(bootstrap)
		if err != nil {
			t.Fatalf("grpc-go xDS resolver: %v", err)
		}
		c := &inProcess{resolver: r, conns: map[string]*grpc.ClientConn{}}
		t.Cleanup(c.close)
		return c
	},
}

// grpcGoVersion is the grpc module version this binary is built with.
func grpcGoVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "google.golang.org/grpc" {
				return m.Version
			}
		}
	}
	return grpc.Version
}

// inProcess is a grpc-go Client: one channel per target, on the
// client's own xDS resolver.
type inProcess struct {
	resolver resolver.Builder
	mu       sync.Mutex
	conns    map[string]*grpc.ClientConn
}

func (c *inProcess) conn(target string) (*grpc.ClientConn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cc := c.conns[target]; cc != nil {
		return cc, nil
	}
	cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithResolvers(c.resolver), grpc.WithDefaultCallOptions(grpc.ForceCodecV2(rawCodec{})))
	if err != nil {
		return nil, fmt.Errorf("grpc-go: dial %s: %w", target, err)
	}
	c.conns[target] = cc
	return cc, nil
}

// Call implements Client.
func (c *inProcess) Call(ctx context.Context, call Call) ([]Result, error) {
	call = call.withDefaults()
	cc, err := c.conn(call.Target)
	if err != nil {
		return nil, err
	}
	out := make([]Result, 0, call.Count)
	for range call.Count {
		out = append(out, invoke(ctx, cc, call))
	}
	return out, nil
}

func invoke(ctx context.Context, cc *grpc.ClientConn, call Call) Result {
	ctx, cancel := context.WithTimeout(ctx, call.Timeout)
	defer cancel()
	for k, v := range call.Metadata {
		ctx = metadata.AppendToOutgoingContext(ctx, k, v)
	}
	var resp []byte
	if err := cc.Invoke(ctx, call.Method, []byte{}, &resp); err != nil {
		s := status.Convert(err)
		return Result{Code: int(s.Code()), Message: s.Message()}
	}
	return Result{Backend: string(resp)}
}

func (c *inProcess) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cc := range c.conns {
		cc.Close()
	}
}
