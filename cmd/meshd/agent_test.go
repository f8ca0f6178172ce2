package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshd/meshd/internal/testrun"

	"github.com/meshd/meshd/security"
	"github.com/meshd/meshd/security/securitytest"
)

// startMeshdCA runs the meshd binary with its CA in folder mode until the
// test ends, and returns its xDS and debug addresses once it is ready,
// and the CA's bundle file, which verifies meshd's serving certificate.
func startMeshdCA(t *testing.T) (xdsAddr, debugAddr, bundle string) {
	t.Helper()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("web-token shop/web\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	xdsAddr, debugAddr = freeAddr(t), freeAddr(t)
	var logs testrun.Buffer
	meshd := exec.Command(bin, "--xds-addr", xdsAddr, "--debug-addr", debugAddr,
		"--ca", "--ca-dir", filepath.Join(dir, "ca"), "--ca-tokens", tokens)
	meshd.Stdout, meshd.Stderr = &logs, &logs
	if err := meshd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		meshd.Process.Kill()
		meshd.Wait()
		if t.Failed() {
			t.Logf("meshd log:\n%s", logs.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for code, _ := get("http://" + debugAddr + "/readyz"); code != http.StatusOK; code, _ = get("http://" + debugAddr + "/readyz") {
		if time.Now().After(deadline) {
			t.Fatal("meshd not ready after 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return xdsAddr, debugAddr, filepath.Join(dir, "ca", "root-cert.pem")
}

// TestAgentAgainstMeshd runs meshd with its CA in folder mode and meshd
// agent --once against it, as two processes.
func TestAgentAgainstMeshd(t *testing.T) {
	xdsAddr, debugAddr, bundle := startMeshdCA(t)

	agent := func(token string) (string, string, error) {
		tokenFile := securitytest.TokenFile(t, t.TempDir(), token)
		out := filepath.Join(t.TempDir(), "out")
		cmd := exec.Command(bin, "agent", "--once", "--xds-addr", xdsAddr, "--root-cert", bundle, "--token-file", tokenFile,
			"--namespace", "shop", "--service-account", "web", "--out", out)
		stderr, err := cmd.CombinedOutput()
		return out, string(stderr), err
	}
	out, stderr, err := agent("web-token")
	if err != nil {
		t.Fatalf("meshd agent: %v\n%s", err, stderr)
	}
	chain, err := os.ReadFile(filepath.Join(out, "cert-chain.pem"))
	if err != nil {
		t.Fatal(err)
	}
	certs, err := security.ParseCerts(chain)
	if err != nil || certs[0].URIs[0].String() != "spiffe://cluster.local/ns/shop/sa/web" {
		t.Fatalf("agent's certificate: %v %v", certs[0].URIs, err)
	}
	for _, f := range []string{"key.pem", "root-cert.pem", "bootstrap.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}

	_, stderr, err = agent("stolen-token")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("an unknown token: %v, want exit 1", err)
	}
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 || !strings.Contains(stderr, "Unauthenticated") {
		t.Errorf("an unknown token: stderr %q, want one line saying Unauthenticated", stderr)
	}
	if _, body := get("http://" + debugAddr + "/metrics"); !strings.Contains(body, `meshd_ca_requests_refused_total{reason="unknown_token"} 1`) {
		t.Error("/metrics does not count the refusal")
	}
}
