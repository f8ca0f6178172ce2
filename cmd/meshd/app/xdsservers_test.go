package app

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

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
	lis := listenEcho(t)
	// The script binds the port itself: free it, keeping the number.
	if err := lis.Close(); err != nil {
		t.Fatal(err)
	}
	m := startTestMesh(t, lis)
	impl.Serve(t, m.echo(t).bootstrap, m.addr)
	mesh, plain := m.clients(t)
	defer noServerNACK(t, m.r, "echo-0.shop")

	expect(t, "default", mesh, "Check", codes.OK, "plaintext")
	expect(t, "default, plaintext client", plain, "Check", codes.OK, "plaintext")

	const pa = "apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: shop}\nspec:\n  mtls: {mode: %s}\n"
	m.write("pa.yaml", fmt.Sprintf(pa, "STRICT"))
	expect(t, "STRICT", mesh, "Check", codes.OK, frontID)
	expect(t, "STRICT, plaintext client", plain, "Check", codes.Unavailable, "")

	// @grpc/grpc-js-xds 1.14.1 NACKs the listener once it carries meshd's
	// RBAC filters ("envoy.filters.http.rbac.deny filter validation
	// failed"): not yet fixed, see docs/clients.md.
	if impl.Name != "grpc-js" {
		const ap = "apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: policy, namespace: shop}\nspec:\n"
		m.write("ap.yaml", ap+"  action: DENY\n  rules: [{from: [{source: {principals: [cluster.local/ns/shop/sa/front]}}]}]\n")
		expect(t, "DENY of the client", mesh, "Check", codes.PermissionDenied, "")
		m.write("ap.yaml", "")
		expect(t, "policy removed", mesh, "Check", codes.OK, frontID)
	}

	// Back to plaintext: a server that took the change for none would
	// still ask for a certificate.
	m.write("pa.yaml", fmt.Sprintf(pa, "PERMISSIVE"))
	expect(t, "PERMISSIVE, plaintext client", plain, "Check", codes.OK, "plaintext")
	expect(t, "PERMISSIVE", mesh, "Check", codes.OK, "plaintext")
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
