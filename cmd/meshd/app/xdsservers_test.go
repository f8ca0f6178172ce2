package app

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/internal/xdsclients"
)

// TestXDSServers runs each xDS server implementation other than grpc-go
// (TestMutualTLSAndAuthorization runs that one) as echo-0 of the mTLS
// test mesh: the server fetches its listener from meshd, built on
// demand, and a grpc-go xDS client calls it through meshd, plaintext
// under PERMISSIVE and with mTLS under STRICT. A NACK from the server
// fails the test.
func TestXDSServers(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts Node.js and Python servers")
	}
	if xdsclients.PeerHeader != peerHeader {
		t.Fatalf("the scripts answer with %s, the test reads %s", xdsclients.PeerHeader, peerHeader)
	}
	for _, impl := range xdsclients.Implementations() {
		if impl.Serve == nil {
			continue
		}
		t.Run(impl.Name, func(t *testing.T) {
			t.Logf("%s %s", impl.Name, impl.Version())
			testXDSServer(t, impl)
		})
	}
}

func testXDSServer(t *testing.T, impl xdsclients.Implementation) {
	lis := listenEchoStatic(t)
	m := startTestMesh(t, lis)
	echo := m.echo(t)
	// The script binds the port itself: free it, keeping the number.
	if err := lis.Close(); err != nil {
		t.Fatal(err)
	}
	impl.Serve(t, echo.bootstrap, m.addr)
	mesh, plain := m.clients(t)
	defer noServerNACK(t, m.r, "echo-0.shop")

	expect(t, "default", mesh, "Check", codes.OK, "plaintext")
	expect(t, "default, plaintext client", plain, "Check", codes.OK, "plaintext")

	const pa = "apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: shop}\nspec:\n  mtls: {mode: %s}\n"
	m.write("pa.yaml", fmt.Sprintf(pa, "STRICT"))
	expect(t, "STRICT", mesh, "Check", codes.OK, frontID)
	expect(t, "STRICT, plaintext client", plain, "Check", codes.Unavailable, "")

	testXDSServerAuthz(t, m, mesh)
	testXDSServerHeaders(t, m, mesh)

	// Back to plaintext: a server that took the change for none would
	// still ask for a certificate.
	m.write("pa.yaml", fmt.Sprintf(pa, "PERMISSIVE"))
	expect(t, "PERMISSIVE, plaintext client", plain, "Check", codes.OK, "plaintext")
	expect(t, "PERMISSIVE", mesh, "Check", codes.OK, "plaintext")
	serverVariant(t, m.r, "echo-0.shop", impl.Name)
}

// authzPolicy is an AuthorizationPolicy of namespace shop: name, action
// and rules (a YAML flow sequence's items).
const authzPolicy = "apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: %s, namespace: shop}\n" +
	"spec:\n  action: %s\n  rules: [%s]\n"

// testXDSServerAuthz changes AuthorizationPolicies of the server under
// STRICT: a DENY of the client wins over an ALLOW of it, an ALLOW list
// without it refuses it, and removing the policies restores access. The
// ALLOW of the client uses every kind of principal, permission and
// matcher meshd emits, so that a server refusing one NACKs.
func testXDSServerAuthz(t *testing.T, m *testMesh, mesh *grpc.ClientConn) {
	allowFront := `{from: [{source: {principals: ["*/ns/shop/sa/front"], namespaces: [shop],` +
		` notPrincipals: [cluster.local/ns/shop/sa/other*]}}],` +
		` to: [{operation: {paths: ["/grpc.health.v1.Health/*"], notPaths: [/x], methods: [POST]}}],` +
		` when: [{key: "request.headers[x-user]", notValues: [mallory]}]}`
	m.write("ap.yaml", fmt.Sprintf(authzPolicy, "deny", "DENY", "{from: [{source: {principals: [cluster.local/ns/shop/sa/front]}}]}"))
	expect(t, "DENY of the client", mesh, "Check", codes.PermissionDenied, "")
	m.write("ap-allow.yaml", fmt.Sprintf(authzPolicy, "allow", "ALLOW", allowFront))
	expect(t, "DENY and ALLOW of the client", mesh, "Check", codes.PermissionDenied, "")
	m.write("ap.yaml", "")
	expect(t, "ALLOW of the client", mesh, "Check", codes.OK, frontID)
	m.write("ap-allow.yaml", fmt.Sprintf(authzPolicy, "allow", "ALLOW", "{from: [{source: {principals: [cluster.local/ns/shop/sa/other]}}]}"))
	expect(t, "ALLOW of another", mesh, "Check", codes.PermissionDenied, "")
	m.write("ap-allow.yaml", "")
	expect(t, "policies removed", mesh, "Check", codes.OK, frontID)
}

// testXDSServerHeaders checks that the server evaluates the header
// matchers of methods and request.headers conditions, in their exact,
// prefix and suffix forms, as grpc-go's server does
// (TestMutualTLSAndAuthorization). Each step first expects an outcome
// that differs from the one before, so that it waits for the change.
func testXDSServerHeaders(t *testing.T, m *testMesh, mesh *grpc.ClientConn) {
	m.write("ap-allow.yaml", fmt.Sprintf(authzPolicy, "allow", "ALLOW",
		`{to: [{operation: {methods: [POST], paths: [/grpc.health.v1.Health/Check]}}],`+
			` when: [{key: "request.headers[x-user]", values: [alice, "bo*"]}]}`))
	expect(t, "header rule, no header", mesh, "Check", codes.PermissionDenied, "")
	expect(t, "header rule, exact", mesh, "Check", codes.OK, frontID, "x-user", "alice")
	expect(t, "header rule, prefix", mesh, "Check", codes.OK, frontID, "x-user", "bob-banned")
	expect(t, "header rule, other user", mesh, "Check", codes.PermissionDenied, "", "x-user", "carol")
	m.write("ap.yaml", fmt.Sprintf(authzPolicy, "deny", "DENY", `{when: [{key: "request.headers[x-user]", values: ["*-banned"]}]}`))
	expect(t, "header DENY, suffix", mesh, "Check", codes.PermissionDenied, "", "x-user", "bob-banned")
	expect(t, "header DENY, another", mesh, "Check", codes.OK, frontID, "x-user", "bob")
	m.write("ap.yaml", "")
	// gRPC calls are all POST: an ALLOW of GET refuses them.
	m.write("ap-allow.yaml", fmt.Sprintf(authzPolicy, "allow", "ALLOW", `{to: [{operation: {methods: [GET]}}]}`))
	expect(t, "ALLOW of GET", mesh, "Check", codes.PermissionDenied, "", "x-user", "alice")
	m.write("ap-allow.yaml", "")
	expect(t, "header policies removed", mesh, "Check", codes.OK, frontID)
}

// serverVariant checks that meshd shows the variant a server
// implementation is sent on node's stream: the legacy one to C-core
// 1.51, the gRPC one to the others.
func serverVariant(t *testing.T, r *running, node, impl string) {
	t.Helper()
	want := collections.VariantGRPC
	if impl == "c-core" {
		want = collections.VariantGRPCLegacy
	}
	for _, p := range r.proxies(t).Proxies {
		if p.NodeID == node && p.Variant != want {
			t.Errorf("%s (%s) is sent variant %q, want %q", node, impl, p.Variant, want)
		}
	}
}

// listenEchoStatic listens on echo-0's address at a port below the
// kernel's ephemeral range that is free on every address. The server
// scripts bind the port themselves, once their listener arrives (its name
// holds the port, so it cannot be 0): a freed ephemeral port may go
// meanwhile to any process that binds port 0 or dials out, one below the
// range only to a process that names it. grpc-js binds the port on every
// interface (docs/clients.md), hence the check on all of them.
func listenEchoStatic(t *testing.T) net.Listener {
	t.Helper()
	low := ephemeralPortsFrom()
	if low <= 2048 {
		return listenEcho(t)
	}
	for range 100 {
		port := low - 1 - rand.IntN(min(low-2048, 16384))
		all, err := net.Listen("tcp", ":"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		all.Close()
		if lis, err := net.Listen("tcp", "127.0.0.21:"+strconv.Itoa(port)); err == nil {
			return lis
		}
	}
	return listenEcho(t)
}

// ephemeralPortsFrom returns the first port of the kernel's ephemeral
// range, Linux's default when it cannot be read.
func ephemeralPortsFrom() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	low, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return low
}

// noServerNACK fails t if meshd recorded a NACK from node's streams.
func noServerNACK(t *testing.T, r *running, node string) {
	t.Helper()
	seen := false
	for _, p := range r.proxies(t).Proxies {
		if p.NodeID != node && !strings.HasPrefix(p.NodeID, node+"#") {
			continue
		}
		seen = true
		for _, ts := range p.Types {
			if ts.LastNACK != nil || len(ts.Rejected) > 0 {
				t.Errorf("%s NACKed %s: %+v", node, ts.TypeURL, ts.LastNACK)
			}
		}
	}
	if !seen {
		t.Errorf("meshd shows no stream of %s", node)
	}
}

// TestListenEchoStatic checks the server tests' port is below the
// ephemeral range and free on every interface.
func TestListenEchoStatic(t *testing.T) {
	lis := listenEchoStatic(t)
	port := lis.Addr().(*net.TCPAddr).Port
	lis.Close()
	if low := ephemeralPortsFrom(); port >= low {
		t.Errorf("port %d is in the ephemeral range, from %d", port, low)
	}
	all, err := net.Listen("tcp", ":"+strconv.Itoa(port))
	if err != nil {
		t.Fatalf("port %d is not free on every interface: %v", port, err)
	}
	all.Close()
}
