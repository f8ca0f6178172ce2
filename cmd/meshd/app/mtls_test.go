package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	xdscreds "google.golang.org/grpc/credentials/xds"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	grpcxds "google.golang.org/grpc/xds"

	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/xds/xdstest"
)

// meshWorkload is the identity of one workload of the test mesh: its
// certificate files, as meshd's agent writes them, and a gRPC xDS
// bootstrap naming them.
type meshWorkload struct {
	id        string
	bootstrap []byte
}

// newMeshWorkload issues id's certificate and writes the bootstrap for a
// workload of meshd at xdsAddr.
func newMeshWorkload(t *testing.T, ca *xdstest.CA, xdsAddr, node, id string) meshWorkload {
	t.Helper()
	dir := t.TempDir()
	ca.WriteWorkload(t, dir, ca.Workload(t, id))
	b, err := json.Marshal(map[string]any{
		"xds_servers": []any{map[string]any{"server_uri": xdsAddr, "channel_creds": []any{map[string]string{"type": "insecure"}},
			"server_features": []string{"xds_v3"}}},
		// grpc-js refuses a node without a locality; an empty one is none.
		"node": map[string]any{"id": node, "locality": map[string]any{}},
		"certificate_providers": map[string]any{collections.CertProviderInstance: map[string]any{
			"plugin_name": "file_watcher",
			"config": map[string]string{
				"certificate_file": filepath.Join(dir, "cert-chain.pem"), "private_key_file": filepath.Join(dir, "key.pem"),
				"ca_certificate_file": filepath.Join(dir, "root-cert.pem"), "refresh_interval": "1s",
			},
		}},
		"server_listener_resource_name_template": collections.ServerListenerNamePrefix + "%s",
	})
	if err != nil {
		t.Fatal(err)
	}
	return meshWorkload{id: id, bootstrap: b}
}

// peerHeader is the response header in which the test server names the
// caller it saw: its SPIFFE ID, or "plaintext".
const peerHeader = "x-peer-identity"

// tellPeer answers every RPC with the caller's identity as the server's
// TLS handshake verified it.
func tellPeer(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	who := "plaintext"
	if p, ok := peer.FromContext(ctx); ok {
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok && ti.SPIFFEID != nil {
			who = ti.SPIFFEID.String()
		}
	}
	_ = grpc.SetHeader(ctx, metadata.Pairs(peerHeader, who))
	return handler(ctx, req)
}

// serveXDS runs a gRPC xDS server, the health service, on lis.
func serveXDS(t *testing.T, w meshWorkload, lis net.Listener, opts ...grpc.ServerOption) {
	t.Helper()
	creds, err := xdscreds.NewServerCredentials(xdscreds.ServerOptions{FallbackCreds: insecure.NewCredentials()})
	if err != nil {
		t.Fatal(err)
	}
	opts = append(opts, grpc.Creds(creds), grpcxds.BootstrapContentsForTesting(w.bootstrap),
		grpc.ChainUnaryInterceptor(tellPeer),
		grpcxds.ServingModeCallback(func(addr net.Addr, a grpcxds.ServingModeChangeArgs) {
			t.Logf("xDS server %s: %v %v", addr, a.Mode, a.Err)
		}))
	s, err := grpcxds.NewGRPCServer(opts...)
	if err != nil {
		t.Fatal(err)
	}
	healthpb.RegisterHealthServer(s, health.NewServer())
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(lis) }()
	t.Cleanup(func() { s.Stop(); <-done })
}

// xdsClient dials target through meshd with xDS credentials: mTLS when
// the cluster says so, plaintext otherwise.
func xdsClient(t *testing.T, w meshWorkload, target string) *grpc.ClientConn {
	t.Helper()
	creds, err := xdscreds.NewClientCredentials(xdscreds.ClientOptions{FallbackCreds: insecure.NewCredentials()})
	if err != nil {
		t.Fatal(err)
	}
	return xdstest.DialXDS(t, w.bootstrap, target, grpc.WithTransportCredentials(creds))
}

// call makes one RPC (Check or List) with optional request headers, given
// timeout to finish, and returns the identity the server saw.
func call(cc *grpc.ClientConn, timeout time.Duration, method string, kv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, kv...)
	var hdr metadata.MD
	var err error
	c := healthpb.NewHealthClient(cc)
	if method == "List" {
		_, err = c.List(ctx, &healthpb.HealthListRequest{}, grpc.Header(&hdr))
	} else {
		_, err = c.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Header(&hdr))
	}
	if err != nil {
		return "", err
	}
	if v := hdr.Get(peerHeader); len(v) == 1 {
		return v[0], nil
	}
	return "", errors.New("no identity header")
}

// expect waits until an RPC has the outcome: the server saw who, or the
// RPC failed with code.
func expect(t *testing.T, what string, cc *grpc.ClientConn, method string, code codes.Code, who string, kv ...string) {
	t.Helper()
	var last string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		got, err := call(cc, 2*time.Second, method, kv...)
		if status.Code(err) == code && (code != codes.OK || got == who) {
			return
		}
		last = fmt.Sprintf("identity %q, err %v", got, err)
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: want %s (%s); last: %s", what, code, who, last)
}

const mtlsMesh = `apiVersion: v1
kind: Service
metadata: {name: echo, namespace: shop}
spec:
  selector: {app: echo}
  ports: [{name: grpc, port: 7000, targetPort: %d}]
---
apiVersion: v1
kind: Pod
metadata: {name: echo-0, namespace: shop, labels: {app: echo}}
spec:
  serviceAccountName: echo
  containers: [{name: app, image: example}]
status:
  phase: Running
  podIP: 127.0.0.21
  conditions: [{type: Ready, status: "True"}]
`

// testMesh is meshd running on a folder holding mtlsMesh, whose echo-0
// serves at addr: an xDS server the test starts.
type testMesh struct {
	r    *running
	ca   *xdstest.CA
	addr string
	// write writes (or, for empty content, removes) a file of the folder.
	write func(name, content string)
}

// startTestMesh starts meshd for an echo-0 that will serve on lis's
// port.
func startTestMesh(t *testing.T, lis net.Listener) *testMesh {
	t.Helper()
	dir := t.TempDir()
	m := &testMesh{ca: xdstest.NewCA(t), addr: lis.Addr().String()}
	m.write = func(name, content string) {
		t.Helper()
		path := filepath.Join(dir, name)
		var err error
		if content == "" {
			err = os.Remove(path)
		} else {
			err = os.WriteFile(path, []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	m.write("mesh.yaml", fmt.Sprintf(mtlsMesh, lis.Addr().(*net.TCPAddr).Port))
	cfg, err := ParseFlags([]string{"--config-dir", dir, "--push-debounce", "10ms", "--xds-addr", "127.0.0.1:0", "--debug-addr", "127.0.0.2:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.r = start(t, cfg)
	m.r.waitReady(t)
	return m
}

// listenEcho listens on echo-0's address, skipping t without the
// loopback alias.
func listenEcho(t *testing.T) net.Listener {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.21:0")
	if err != nil {
		t.Skipf("loopback alias unavailable: %v", err)
	}
	return lis
}

// echo is the workload of echo-0, the server.
func (m *testMesh) echo(t *testing.T) meshWorkload {
	t.Helper()
	return newMeshWorkload(t, m.ca, m.r.app.XDSAddr(), "echo-0.shop", echoID)
}

// clients returns a grpc-go xDS client of identity front and a plaintext
// client of the server.
func (m *testMesh) clients(t *testing.T) (mesh, plain *grpc.ClientConn) {
	t.Helper()
	mesh = xdsClient(t, newMeshWorkload(t, m.ca, m.r.app.XDSAddr(), "front-0.shop", frontID), "echo.shop.svc.cluster.local:7000")
	plain, err := grpc.NewClient(m.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plain.Close() })
	return mesh, plain
}

// startMTLSMesh runs meshd on a folder holding mtlsMesh, a grpc-go xDS
// server for echo-0 and returns an xDS client of identity front, a
// plaintext client of the server, and testMesh.write.
func startMTLSMesh(t *testing.T) (mesh, plain *grpc.ClientConn, write func(name, content string)) {
	t.Helper()
	lis := listenEcho(t)
	m := startTestMesh(t, lis)
	serveXDS(t, m.echo(t), lis)
	mesh, plain = m.clients(t)
	return mesh, plain, m.write
}

// The identities of the test mesh's client and server.
const frontID, echoID = "spiffe://cluster.local/ns/shop/sa/front", "spiffe://cluster.local/ns/shop/sa/echo"

// TestMutualTLSAndAuthorization runs meshd on a folder and a grpc-go xDS
// server and client with identities of a test CA, and changes
// PeerAuthentication and AuthorizationPolicy files live: nothing restarts.
func TestMutualTLSAndAuthorization(t *testing.T) {
	mesh, plain, write := startMTLSMesh(t)
	// No policy: PERMISSIVE, which gRPC servers serve as plaintext.
	expect(t, "default", mesh, "Check", codes.OK, "plaintext")
	expect(t, "default, plaintext client", plain, "Check", codes.OK, "plaintext")

	const pa = "apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: shop}\nspec:\n  mtls: {mode: %s}\n"
	write("pa.yaml", fmt.Sprintf(pa, "STRICT"))
	expect(t, "STRICT", mesh, "Check", codes.OK, frontID)
	expect(t, "STRICT, plaintext client", plain, "Check", codes.Unavailable, "")

	const ap = "apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: policy, namespace: shop}\nspec:\n"
	write("ap.yaml", ap+"  action: DENY\n  rules: [{from: [{source: {principals: [cluster.local/ns/shop/sa/front]}}]}]\n")
	expect(t, "DENY of the client", mesh, "Check", codes.PermissionDenied, "")

	write("ap.yaml", ap+"  action: ALLOW\n  rules: [{from: [{source: {principals: [cluster.local/ns/shop/sa/other]}}]}]\n")
	expect(t, "ALLOW of another", mesh, "Check", codes.PermissionDenied, "")

	// Check for the client; List only with x-user: alice.
	write("ap.yaml", ap+`  selector: {matchLabels: {app: echo}}
  action: ALLOW
  rules:
  - from: [{source: {namespaces: [shop]}}]
    to: [{operation: {paths: [/grpc.health.v1.Health/Check]}}]
  - to: [{operation: {methods: [POST], paths: ["*/List"]}}]
    when: [{key: "request.headers[x-user]", values: [alice]}]
`)
	expect(t, "path rule, allowed", mesh, "Check", codes.OK, frontID)
	expect(t, "path rule, denied", mesh, "List", codes.PermissionDenied, "")
	expect(t, "header rule", mesh, "List", codes.OK, frontID, "x-user", "alice")
	expect(t, "header rule, other user", mesh, "List", codes.PermissionDenied, "", "x-user", "bob")

	write("ap.yaml", "")
	expect(t, "policy removed", mesh, "List", codes.OK, frontID)

	write("pa.yaml", fmt.Sprintf(pa, "PERMISSIVE"))
	expect(t, "PERMISSIVE, plaintext client", plain, "Check", codes.OK, "plaintext")
	expect(t, "PERMISSIVE", mesh, "Check", codes.OK, "plaintext")
}
