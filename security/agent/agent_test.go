package agent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/tls/certprovider"
	_ "google.golang.org/grpc/credentials/tls/certprovider/pemfile" // the file_watcher plugin
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"

	"github.com/meshd/meshd/internal/leakcheck"
	"github.com/meshd/meshd/security"
	"github.com/meshd/meshd/security/caserver"
	"github.com/meshd/meshd/security/securitytest"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

var td = spiffeid.RequireTrustDomainFromString("cluster.local")

// startCA serves a CA over TLS with a token per service account of ns
// shop, and returns its address and a client TLS config for it.
func startCA(t *testing.T, opts ...security.Option) (string, *tls.Config) {
	t.Helper()
	kp, err := security.GenerateRoot(td, time.Now(), 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := security.ParseTokens([]byte("client-token shop/client\nserver-token shop/server\n"))
	if err != nil {
		t.Fatal(err)
	}
	svc := caserver.New(security.NewStaticAuthority(kp, opts...), tokens, func() spiffeid.TrustDomain { return td })
	return securitytest.ServeTLS(t, svc.Register)
}

// runAgent runs an agent once for sa into a new directory.
func runAgent(t *testing.T, caAddr string, caTLS *tls.Config, sa string) (string, Result) {
	t.Helper()
	dir := t.TempDir()
	tokenFile := securitytest.TokenFile(t, dir, sa+"-token\n")
	out := filepath.Join(dir, "out")
	a, err := New(Config{CAAddr: caAddr, CATLS: caTLS, XDSAddr: "127.0.0.1:15010", TokenFile: tokenFile,
		Namespace: "shop", ServiceAccount: sa, PodName: sa + "-0", PodIP: "127.0.0.1", OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.WriteBootstrap(); err != nil {
		t.Fatal(err)
	}
	res, err := a.Renew(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return out, res
}

// provider starts grpc-go's file_watcher plugin on the config the
// agent's bootstrap gives it.
func provider(t *testing.T, dir string) certprovider.Provider {
	t.Helper()
	var b struct {
		CertificateProviders map[string]struct {
			PluginName string          `json:"plugin_name"`
			Config     json.RawMessage `json:"config"`
		} `json:"certificate_providers"`
		Template string `json:"server_listener_resource_name_template"`
	}
	data, err := os.ReadFile(filepath.Join(dir, BootstrapFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatal(err)
	}
	if b.Template != "grpc/server?xds.resource.listening_address=%s" {
		t.Errorf("listener template %q", b.Template)
	}
	pc := b.CertificateProviders[ProviderInstance]
	p, err := certprovider.GetProvider(pc.PluginName, pc.Config, certprovider.BuildOptions{WantIdentity: true, WantRoot: true})
	if err != nil {
		t.Fatalf("the file_watcher plugin refuses the bootstrap's config: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

func keyMaterial(t *testing.T, p certprovider.Provider) *certprovider.KeyMaterial {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	km, err := p.KeyMaterial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return km
}

// TestMutualTLSFromAgentFiles gives a client and a server their
// identities with the agent, loads them through grpc-go's file_watcher
// plugin, and makes an RPC over mTLS: each side sees the other's SPIFFE
// ID.
func TestMutualTLSFromAgentFiles(t *testing.T) {
	caAddr, caTLS := startCA(t)
	serverDir, _ := runAgent(t, caAddr, caTLS, "server")
	clientDir, _ := runAgent(t, caAddr, caTLS, "client")
	skm, ckm := keyMaterial(t, provider(t, serverDir)), keyMaterial(t, provider(t, clientDir))

	seen := make(chan string, 1)
	gs := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{
		Certificates: skm.Certs, ClientCAs: skm.Roots, ClientAuth: tls.RequireAndVerifyClientCert,
	})), grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		p, _ := peer.FromContext(ctx)
		seen <- p.AuthInfo.(credentials.TLSInfo).SPIFFEID.String()
		return h(ctx, req)
	}))
	healthpb.RegisterHealthServer(gs, health.NewServer())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(lis)
	defer gs.Stop()

	// The client checks the server's SPIFFE ID itself: a workload
	// certificate has no DNS name to check.
	var serverID string
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{
		Certificates: ckm.Certs, InsecureSkipVerify: true,
		VerifyPeerCertificate: verifySPIFFE(ckm.Roots, &serverID),
	})))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	var p peer.Peer
	if _, err := healthpb.NewHealthClient(cc).Check(context.Background(), &healthpb.HealthCheckRequest{}, grpc.Peer(&p)); err != nil {
		t.Fatal(err)
	}
	if got := p.AuthInfo.(credentials.TLSInfo).SPIFFEID.String(); got != "spiffe://cluster.local/ns/shop/sa/server" || serverID != got {
		t.Errorf("client sees the server as %q (verified: %q)", got, serverID)
	}
	if got := <-seen; got != "spiffe://cluster.local/ns/shop/sa/client" {
		t.Errorf("server sees the client as %q", got)
	}
}

// verifySPIFFE verifies a peer's chain against roots and records its ID.
func verifySPIFFE(roots *x509.CertPool, id *string) func([][]byte, [][]*x509.Certificate) error {
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		var certs []*x509.Certificate
		for _, r := range raw {
			c, err := x509.ParseCertificate(r)
			if err != nil {
				return err
			}
			certs = append(certs, c)
		}
		inter := x509.NewCertPool()
		for _, c := range certs[1:] {
			inter.AddCert(c)
		}
		if _, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			return err
		}
		*id = certs[0].URIs[0].String()
		return nil
	}
}

func TestFilesAndModes(t *testing.T) {
	caAddr, caTLS := startCA(t, security.WithLeafTTL(time.Hour))
	dir, res := runAgent(t, caAddr, caTLS, "client")
	for name, mode := range map[string]os.FileMode{CertChainFile: 0o644, KeyFile: 0o600, RootCertFile: 0o644, BootstrapFile: 0o644} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %o, want %o", name, fi.Mode().Perm(), mode)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 4 {
		t.Errorf("%d files in the output, want 4 (no temporary left)", len(entries))
	}
	if res.BundleChanged {
		t.Error("a first renewal reported a changed bundle")
	}
	if got := NextRenewal(res.Leaf.NotBefore, res.Leaf.NotAfter, false).Sub(res.Leaf.NotBefore); got != res.Leaf.NotAfter.Sub(res.Leaf.NotBefore)/2 {
		t.Errorf("renews %s after issue, want at half life", got)
	}
}

func TestRenewRefused(t *testing.T) {
	caAddr, caTLS := startCA(t)
	dir := t.TempDir()
	tokenFile := securitytest.TokenFile(t, dir, "nobody-token")
	a, err := New(Config{CAAddr: caAddr, CATLS: caTLS, XDSAddr: "x:1", TokenFile: tokenFile,
		Namespace: "shop", ServiceAccount: "x", OutDir: filepath.Join(dir, "out")})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Renew(context.Background()); err == nil {
		t.Fatal("an unknown token got a certificate")
	}
	if _, err := os.Stat(filepath.Join(dir, "out", KeyFile)); err == nil {
		t.Error("a refused renewal wrote a key")
	}
}
