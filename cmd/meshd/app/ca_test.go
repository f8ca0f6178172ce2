package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pb "istio.io/api/security/v1alpha1"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/meshd/meshd/security"
	"github.com/meshd/meshd/security/securitytest"
	"github.com/meshd/meshd/xds/xdstest"
)

// caFlags returns the flags of meshd serving its CA in folder mode over
// TLS, with a tokens file, and the CA's directory.
func caFlags(t *testing.T, dir string) ([]string, *xdstest.CA) {
	t.Helper()
	tls := xdstest.NewCA(t)
	cert, key := xdstest.WriteKeyPair(t, dir, "server", tls.Server(t))
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("web-token shop/web\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--xds-addr", "127.0.0.1:0", "--debug-addr", "127.0.0.1:0",
		"--xds-tls-cert", cert, "--xds-tls-key", key,
		"--ca", "--ca-dir", filepath.Join(dir, "ca"), "--ca-tokens", tokens, "--ca-cert-ttl", "1h"}, tls
}

// sign asks the CA on addr for a certificate with token; the bundle is
// the last element of the answer.
func sign(t *testing.T, addr string, serverCA *xdstest.CA, token string, uris ...string) (*pb.IstioCertificateResponse, error) {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(serverCA.ClientConfig())))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
	return pb.NewIstioCertificateServiceClient(cc).CreateCertificate(ctx,
		&pb.IstioCertificateRequest{Csr: securitytest.CSR(t, securitytest.Key(t), uris...)})
}

// startAndSign runs meshd with cfg until it is ready and has its CA sign
// a certificate for the token web-token, which must succeed.
func startAndSign(t *testing.T, cfg Config, serverCA *xdstest.CA) (*running, *pb.IstioCertificateResponse) {
	t.Helper()
	r := start(t, cfg)
	r.waitReady(t)
	resp, err := sign(t, r.app.XDSAddr(), serverCA, "web-token")
	if err != nil {
		t.Fatal(err)
	}
	return r, resp
}

func TestCAOnTheXDSListener(t *testing.T) {
	dir := t.TempDir()
	flags, serverCA := caFlags(t, dir)
	cfg, err := ParseFlags(flags, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, resp := startAndSign(t, cfg, serverCA)
	leaf, _ := security.ParseCerts([]byte(resp.CertChain[0]))
	if got := leaf[0].URIs[0].String(); got != "spiffe://cluster.local/ns/shop/sa/web" {
		t.Fatalf("leaf names %s", got)
	}
	_, err = sign(t, r.app.XDSAddr(), serverCA, "web-token", "spiffe://cluster.local/ns/shop/sa/admin")
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("a CSR for another identity: %v", err)
	}
	_, body := r.get(t, "/metrics")
	for _, want := range []string{"meshd_ca_certificates_issued_total 1", `meshd_ca_requests_refused_total{reason="identity_mismatch"} 1`, "meshd_ca_root_expiry_seconds "} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}

	// Restarted on the same directory, meshd signs with the same root.
	_, resp2 := startAndSign(t, cfg, serverCA)
	if resp2.CertChain[len(resp2.CertChain)-1] != resp.CertChain[len(resp.CertChain)-1] {
		t.Fatal("the root bundle changed across a restart")
	}
}
