package xdsclients

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// Call is a batch of unary calls one Client makes in sequence.
type Call struct {
	// Target is the channel's target, "xds:///name".
	Target string `json:"target"`
	// Method is the full method name, "/package.Service/Method".
	Method string `json:"method"`
	// Metadata is sent with every call.
	Metadata map[string]string `json:"metadata,omitempty"`
	// Timeout is each call's deadline. Default: 5s.
	Timeout time.Duration `json:"-"`
	// Count is the number of calls. Default: 1.
	Count int `json:"count"`
}

// Result is the outcome of one call.
type Result struct {
	// Backend is what the backend answered: its address (see
	// StartBackends). Empty when the call failed.
	Backend string `json:"backend"`
	// Code is the gRPC status code, 0 for OK.
	Code int `json:"code"`
	// Message is the status message of a failed call.
	Message string `json:"message"`
}

// Client is one running xDS client of some implementation. Calls on one
// target share one channel, so its xDS watches outlive a Call. A Client
// is used by one goroutine; it stops at the end of the test that started
// it.
type Client interface {
	// Call makes c's calls in order and returns their results; an error
	// means the client itself failed, not a call.
	Call(ctx context.Context, c Call) ([]Result, error)
}

// Implementation is one xDS client implementation.
type Implementation struct {
	// Name names the implementation in test names: "grpc-go",
	// "grpc-js", "c-core".
	Name string
	// Version is the library version it runs, as pinned or as installed.
	Version func() string
	// Install installs the implementation unless it is installed, once
	// per process, and says why it cannot be when it cannot.
	Install func() error
	// Start starts a client with the bootstrap file's contents, installing
	// the implementation first when needed; it skips t when it cannot.
	Start func(t testing.TB, bootstrap []byte) Client
	// Serve, when not nil, starts an xDS server of the implementation at
	// addr (host:port) with the bootstrap, which must name a server
	// listener template: it serves grpc.health.v1.Health/Check with xDS
	// server credentials (mTLS or plaintext as its listener says),
	// answering with PeerHeader, and stops at the end of the test. It
	// returns once the server is up (see waitStarted), installing the
	// implementation first when needed; it skips t when it cannot. It is
	// nil for grpc-go, which tests run in process (grpc/xds).
	Serve func(t testing.TB, bootstrap []byte, addr string)
}

// Implementations returns every implementation, grpc-go first.
func Implementations() []Implementation {
	return []Implementation{grpcGo, grpcJS, cCore}
}

// withDefaults returns c with its defaults filled in.
func (c Call) withDefaults() Call {
	if c.Timeout <= 0 {
		c.Timeout = 5 * time.Second
	}
	if c.Count <= 0 {
		c.Count = 1
	}
	return c
}

// command is the JSON line the scripts read.
func (c Call) command() ([]byte, error) {
	c = c.withDefaults()
	b, err := json.Marshal(struct {
		Call
		TimeoutMs int64 `json:"timeoutMs"`
	}{c, c.Timeout.Milliseconds()})
	if err != nil {
		return nil, fmt.Errorf("encode call: %w", err)
	}
	return append(b, '\n'), nil
}

// Bootstrap returns a gRPC xDS bootstrap for a plaintext server at addr
// (host:port) and a node with id and metadata.
func Bootstrap(addr, nodeID string, metadata map[string]string) []byte {
	type server struct {
		URI      string              `json:"server_uri"`
		Creds    []map[string]string `json:"channel_creds"`
		Features []string            `json:"server_features"`
	}
	type node struct {
		ID string `json:"id"`
		// grpc-js refuses a node without a locality; an empty one is
		// none.
		Locality struct{}          `json:"locality"`
		Metadata map[string]string `json:"metadata,omitempty"`
	}
	b, _ := json.Marshal(struct {
		Servers []server `json:"xds_servers"`
		Node    node     `json:"node"`
	}{
		[]server{{URI: addr, Creds: []map[string]string{{"type": "insecure"}}, Features: []string{"xds_v3"}}},
		node{ID: nodeID, Metadata: metadata},
	})
	return b
}
