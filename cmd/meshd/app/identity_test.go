package app

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/meshd/meshd/xds"
)

// pki is a test CA whose files meshd's TLS flags read.
type pki struct {
	dir    string
	ca     *x509.Certificate
	key    *ecdsa.PrivateKey
	pool   *x509.CertPool
	serial int64
}

func newTestPKI(t *testing.T) *pki {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "meshd test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	p := &pki{dir: t.TempDir(), ca: ca, key: key, pool: x509.NewCertPool(), serial: 1}
	p.pool.AddCert(ca)
	p.write(t, "ca.pem", "CERTIFICATE", der)
	return p
}

func (p *pki) write(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// issue signs a certificate: for 127.0.0.1 when server, else a client
// certificate with the given URI SANs.
func (p *pki) issue(t *testing.T, server bool, uris ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial), Subject: pkix.Name{CommonName: "meshd test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	for _, s := range uris {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		tmpl.URIs = append(tmpl.URIs, u)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// serverFiles writes a server certificate and key for 127.0.0.1.
func (p *pki) serverFiles(t *testing.T) (cert, key string) {
	t.Helper()
	c := p.issue(t, true)
	k, err := x509.MarshalECPrivateKey(c.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	return p.write(t, "server.pem", "CERTIFICATE", c.Certificate[0]), p.write(t, "server-key.pem", "EC PRIVATE KEY", k)
}

// adsAs returns an ADS client connected over mTLS presenting cert, and a
// context for its streams; both end with the test.
func (p *pki) adsAs(t *testing.T, addr string, cert tls.Certificate) (discoveryv3.AggregatedDiscoveryServiceClient, context.Context) {
	t.Helper()
	creds := credentials.NewTLS(&tls.Config{RootCAs: p.pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(func() {
		cancel()
		cc.Close()
	})
	return discoveryv3.NewAggregatedDiscoveryServiceClient(cc), ctx
}

// cdsAs opens a SotW stream presenting cert, as a node claiming namespace
// ns ("": none), asks for every cluster and returns their names, or the
// error that ended the stream.
func (p *pki) cdsAs(t *testing.T, addr string, cert tls.Certificate, ns string) ([]string, error) {
	t.Helper()
	ads, ctx := p.adsAs(t, addr, cert)
	stream, err := ads.StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node := &corev3.Node{Id: "proxy"}
	if ns != "" {
		if node.Metadata, err = structpb.NewStruct(map[string]any{"NAMESPACE": ns}); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Send(&discoveryv3.DiscoveryRequest{Node: node, TypeUrl: xds.ClusterType}); err != nil {
		t.Fatal(err)
	}
	r, err := stream.Recv()
	if err != nil {
		return nil, err
	}
	return clusterNames(t, r), nil
}

// TestCertificateIdentityFlag runs meshd with mTLS, namespace isolation
// bound to the client certificate and a small subscription limit, and
// checks what proxies with SPIFFE certificates of namespaces a and b are
// served, and that refusals show in /metrics.
func TestCertificateIdentityFlag(t *testing.T) {
	p := newTestPKI(t)
	cert, key := p.serverFiles(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "services.yaml"), []byte(scopedServices), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseFlags([]string{"--config-dir", dir, "--xds-addr", "127.0.0.1:0", "--debug-addr", "127.0.0.1:0", "--push-debounce", "10ms",
		"--xds-tls-cert", cert, "--xds-tls-key", key, "--xds-client-ca", filepath.Join(p.dir, "ca.pem"),
		"--namespace-isolation", "--namespace-isolation-identity", "certificate", "--xds-max-subscribed-names", "3"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, cfg)
	r.waitReady(t)
	addr := r.app.XDSAddr()
	certA := p.issue(t, false, "spiffe://cluster.local/ns/a/sa/default")
	certB := p.issue(t, false, "spiffe://cluster.local/ns/b/sa/default")

	both, public := []string{privCluster, pubCluster}, []string{pubCluster}
	for _, tc := range []struct {
		name string
		cert tls.Certificate
		ns   string
		want []string // nil: refused
	}{
		{"cert a, node silent", certA, "", both},
		{"cert a, node a", certA, "a", both},
		{"cert b, node silent", certB, "", public},
		{"cert b, node claims a", certB, "a", nil},
	} {
		got, err := p.cdsAs(t, addr, tc.cert, tc.ns)
		if tc.want == nil {
			if status.Code(err) != codes.PermissionDenied {
				t.Errorf("%s: %v, %v; want PermissionDenied", tc.name, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}

	// Four names over the limit of three.
	ads, ctx := p.adsAs(t, addr, certA)
	stream, err := ads.DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNamesSubscribe: []string{"w", "x", "y", "z"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("4 names with --xds-max-subscribed-names 3: %v, want ResourceExhausted", err)
	}

	_, metrics := r.get(t, "/metrics")
	for _, want := range []string{
		"meshd_xds_identity_mismatch_total 1",
		`meshd_xds_limit_exceeded_total{limit="subscribed_names"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if !strings.Contains(r.log.String(), "certificate") || !strings.Contains(r.log.String(), "stream ended by a limit") {
		t.Errorf("refusals not logged:\n%s", r.log)
	}
}

// TestExposesNodeClaim: isolation trusting the node's claim on a
// reachable xDS port is worth a warning at start.
func TestExposesNodeClaim(t *testing.T) {
	for _, tc := range []struct {
		addr      string
		isolation bool
		identity  string
		want      bool
	}{
		{"0.0.0.0:15010", true, IdentityNode, true},
		{"10.0.0.1:15010", true, "", true},
		{"127.0.0.1:15010", true, IdentityNode, false},
		{"0.0.0.0:15010", true, IdentityCertificate, false},
		{"0.0.0.0:15010", false, IdentityNode, false},
	} {
		c := DefaultConfig()
		c.XDSAddr, c.NamespaceIsolation, c.NamespaceIsolationIdentity = tc.addr, tc.isolation, tc.identity
		if got := exposesNodeClaim(c); got != tc.want {
			t.Errorf("%s, isolation %v, identity %q: %v, want %v", tc.addr, tc.isolation, tc.identity, got, tc.want)
		}
	}
}
