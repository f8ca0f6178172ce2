package xdstest

import (
	"encoding/json"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	grpcxds "google.golang.org/grpc/xds"
	"google.golang.org/protobuf/encoding/protojson"
)

// Bootstrap returns a grpc-go xDS bootstrap for node naming the servers
// at addrs, in priority order, each over plaintext.
func Bootstrap(t testing.TB, node *corev3.Node, addrs ...string) []byte {
	t.Helper()
	type server struct {
		URI      string              `json:"server_uri"`
		Creds    []map[string]string `json:"channel_creds"`
		Features []string            `json:"server_features"`
	}
	nodeJSON, err := protojson.Marshal(node)
	if err != nil {
		t.Fatal(err)
	}
	b := struct {
		Servers []server        `json:"xds_servers"`
		Node    json.RawMessage `json:"node"`
	}{Node: nodeJSON}
	for _, a := range addrs {
		b.Servers = append(b.Servers, server{URI: a, Creds: []map[string]string{{"type": "insecure"}}, Features: []string{"xds_v3"}})
	}
	out, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// DialXDS returns a connection to "xds:///"+target through grpc-go's xDS
// resolver on bootstrap (a resolver of its own, so a stream and node of
// its own), over plaintext unless opts give other credentials. It closes
// when the test ends.
func DialXDS(t testing.TB, bootstrap []byte, target string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	rb, err := grpcxds.NewXDSResolverWithConfigForTesting(bootstrap)
	if err != nil {
		t.Fatal(err)
	}
	opts = append([]grpc.DialOption{grpc.WithResolvers(rb), grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)
	cc, err := grpc.NewClient("xds:///"+target, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}
