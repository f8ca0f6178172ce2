package app

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"

	"github.com/meshd/meshd/security"
	"github.com/meshd/meshd/security/agent"
	"github.com/meshd/meshd/security/securitytest"
)

// rotationLeafTTL is the workload certificates' life in the rotation test:
// agents renew every 3 s, and a root rotation takes two lives.
const rotationLeafTTL = 6 * time.Second

// rotationRPCTimeout bounds each RPC of the rotation test. A certificate
// that does not verify fails an RPC at once (Unavailable: the channel is
// in transient failure, and the RPCs do not wait for ready), so the bound
// only has to outlast a reconnection on a loaded machine. A key and chain
// that did not match once stalled a reconnection for a file-watcher
// refresh, past 2 s under -race in CI; the agent now stages them together,
// and the log shows the slowest RPC.
const rotationRPCTimeout = 5 * time.Second

// TestIdentitiesThroughRenewalAndRotation runs a client and a server whose
// identities come from meshd's agent, under STRICT mTLS, with a steady
// stream of RPCs while every certificate renews each few seconds and the
// CA rotates its root again and again. The server ends each connection
// after a second, so handshakes keep using the newest files. No RPC may
// fail, and both workloads must have been signed by more than one root.
func TestIdentitiesThroughRenewalAndRotation(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.21:0")
	if err != nil {
		t.Skipf("loopback alias unavailable: %v", err)
	}
	xdsAddr, bundle := startRotatingCA(t, lis.Addr().(*net.TCPAddr).Port)
	echoDir := runAgent(t, xdsAddr, bundle, "echo", "127.0.0.21")
	frontDir := runAgent(t, xdsAddr, bundle, "front", "127.0.0.22")

	serveXDS(t, agentWorkload(t, echoDir), lis, grpc.KeepaliveParams(keepalive.ServerParameters{
		MaxConnectionAge: time.Second, MaxConnectionAgeGrace: time.Second}))
	cc := xdsClient(t, agentWorkload(t, frontDir), "echo.shop.svc.cluster.local:7000")
	expect(t, "first RPC over mTLS", cc, "Check", codes.OK, frontID)

	signers := map[string]map[string]bool{"echo": {}, "front": {}}
	var rpcs int
	var slowest time.Duration
	for end := time.Now().Add(4 * rotationLeafTTL); time.Now().Before(end); rpcs++ {
		began := time.Now()
		if who, err := call(cc, rotationRPCTimeout, "Check"); err != nil || who != frontID {
			t.Fatalf("RPC %d (after %v, channel %v): server saw %q, err %v; want %s and no error",
				rpcs, time.Since(began).Round(time.Millisecond), cc.GetState(), who, err, frontID)
		}
		slowest = max(slowest, time.Since(began))
		for name, dir := range map[string]string{"echo": echoDir, "front": frontDir} {
			if issuer := leafIssuer(t, dir); issuer != "" {
				signers[name][issuer] = true
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	for name, roots := range signers {
		if len(roots) < 2 {
			t.Errorf("%s's certificates were signed by %d root(s) over the test, want a rotation (2 or more)", name, len(roots))
		}
	}
	t.Logf("%d RPCs, no failure, the slowest %v; signers: echo %d, front %d",
		rpcs, slowest.Round(time.Millisecond), len(signers["echo"]), len(signers["front"]))
}

// startRotatingCA runs meshd with its CA on a folder holding mtlsMesh
// (its echo pod serving on port) under STRICT mTLS. Its roots live an hour
// and are rotated whenever none is under way. It returns the xDS address
// and the CA's bundle file, which verifies meshd's serving certificate.
func startRotatingCA(t *testing.T, port int) (string, string) {
	t.Helper()
	dir := t.TempDir()
	meshDir, tokens := filepath.Join(dir, "mesh"), filepath.Join(dir, "tokens")
	strict := "---\napiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: shop}\nspec:\n  mtls: {mode: STRICT}\n"
	if err := os.Mkdir(meshDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(meshDir, "mesh.yaml"), []byte(fmt.Sprintf(mtlsMesh, port)+strict), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokens, []byte("echo-token shop/echo\nfront-token shop/front\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseFlags([]string{"--config-dir", meshDir, "--push-debounce", "10ms", "--xds-addr", "127.0.0.1:0", "--debug-addr", "127.0.0.2:0",
		"--ca", "--ca-dir", filepath.Join(dir, "ca"), "--ca-tokens", tokens}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.caOptions = []security.Option{security.WithLeafTTL(rotationLeafTTL), security.WithRootTTL(time.Hour),
		security.WithReload(200 * time.Millisecond), security.WithRotation(security.RotationPolicy{Before: 2 * time.Hour})}
	r := start(t, cfg)
	r.waitReady(t)
	return r.app.XDSAddr(), filepath.Join(dir, "ca", security.BundleFile)
}

// runAgent runs meshd's agent for service account sa of namespace shop,
// reaching meshd over TLS verified by bundle, until the test ends, and returns its output directory once it holds a
// certificate and a bootstrap.
func runAgent(t *testing.T, xdsAddr, bundle, sa, podIP string) string {
	t.Helper()
	dir := t.TempDir()
	token := securitytest.TokenFile(t, dir, sa+"-token")
	out := filepath.Join(dir, "out")
	a, err := agent.New(agent.Config{CAAddr: xdsAddr, XDSAddr: xdsAddr, CATLS: trusting(t, bundle), XDSTLS: true, TokenFile: token, Namespace: "shop", ServiceAccount: sa,
		PodName: sa + "-0", PodIP: podIP, OutDir: out, RefreshInterval: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = a.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; a.Close() })
	deadline := time.Now().Add(20 * time.Second)
	for leafIssuer(t, out) == "" {
		if time.Now().After(deadline) {
			t.Fatalf("agent %s wrote no certificate in 20s", sa)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return out
}

// agentWorkload is the workload of an agent's output directory.
func agentWorkload(t *testing.T, dir string) meshWorkload {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "bootstrap.json"))
	if err != nil {
		t.Fatal(err)
	}
	return meshWorkload{bootstrap: b}
}

// leafIssuer is the authority key id of the certificate in dir, "" while
// there is none.
func leafIssuer(t *testing.T, dir string) string {
	t.Helper()
	pem, err := os.ReadFile(filepath.Join(dir, "cert-chain.pem"))
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	certs, err := security.ParseCerts(pem)
	if err != nil || len(certs) == 0 {
		t.Fatalf("%s: certificate chain: %v", dir, err)
	}
	return fmt.Sprintf("%x", certs[0].AuthorityKeyId)
}
