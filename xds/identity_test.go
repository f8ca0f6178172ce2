package xds_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/meshd/meshd/xds"
)

// testPKI is a CA, a server certificate for 127.0.0.1 and the pool that
// trusts the CA, made in memory for one test.
type testPKI struct {
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	pool   *x509.CertPool
	server tls.Certificate
	serial int64
}

func newPKI(t *testing.T) *testPKI {
	t.Helper()
	ca, caKey := newCA(t)
	p := &testPKI{ca: ca, caKey: caKey, pool: x509.NewCertPool(), serial: 10}
	p.pool.AddCert(ca)
	p.server = p.issue(t, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "xds"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	return p
}

// issue signs tmpl (subject, SANs, usage) with the CA.
func (p *testPKI) issue(t *testing.T, tmpl *x509.Certificate) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p.serial++
	tmpl.SerialNumber = big.NewInt(p.serial)
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// client issues a client certificate with the given URI SANs.
func (p *testPKI) client(t *testing.T, uris ...string) tls.Certificate {
	t.Helper()
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "proxy"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	for _, s := range uris {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		tmpl.URIs = append(tmpl.URIs, u)
	}
	return p.issue(t, tmpl)
}

// serverTLS requires client certificates signed by the CA.
func (p *testPKI) serverTLS() *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{p.server},
		ClientCAs:    p.pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS12,
	}
}

// dialTLS connects to addr presenting cert.
func (p *testPKI) dialTLS(t *testing.T, addr string, cert tls.Certificate) *grpc.ClientConn {
	t.Helper()
	creds := credentials.NewTLS(&tls.Config{RootCAs: p.pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

func spiffeID(ns string) string { return "spiffe://cluster.local/ns/" + ns + "/sa/default" }

// TestPeerNamespace serves the scoped clusters with namespace isolation
// bound to the client certificate's SPIFFE ID over mTLS on 127.0.0.1. A
// proxy is served its certificate's namespace's view whatever its node
// leaves unsaid, and a node naming another namespace than its
// certificate's is refused with PermissionDenied.
func TestPeerNamespace(t *testing.T) {
	pki := newPKI(t)
	f := newScopedFixture(t, scopedItems, xds.WithTLSConfig(pki.serverTLS()),
		xds.WithNamespaceIsolation(nil), xds.WithPeerNamespace(xds.SPIFFENamespace))
	certA, certB, certNone := pki.client(t, spiffeID("a")), pki.client(t, spiffeID("b")), pki.client(t)
	viewA := []string{"priv.a", "pub.a", "pub.b", "shared.a"}
	viewPublic := []string{"pub.a", "pub.b", "rest.a"}

	istioNode := func(ns string) *corev3.Node {
		return &corev3.Node{Id: "sidecar~10.0.0.1~pod-1." + ns + "~" + ns + ".svc.cluster.local"}
	}
	tests := []struct {
		name string
		cert tls.Certificate
		node *corev3.Node
		want []string // nil: refused
	}{
		{"cert a, node silent", certA, nodeIn(t, "p", ""), viewA},
		{"cert a, node a", certA, nodeIn(t, "p", "a"), viewA},
		{"cert a, node claims b", certA, nodeIn(t, "p", "b"), nil},
		{"cert a, Istio node id of b", certA, istioNode("b"), nil},
		{"cert a, Istio node id of a", certA, istioNode("a"), viewA},
		{"cert b, node silent", certB, nodeIn(t, "p", ""), viewPublic},
		{"cert b, node claims a", certB, nodeIn(t, "p", "a"), nil},
		{"cert without namespace, node silent", certNone, nodeIn(t, "p", ""), viewPublic},
		{"cert without namespace, node claims a", certNone, nodeIn(t, "p", "a"), nil},
	}
	var refused uint64
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cc := pki.dialTLS(t, f.addr, tt.cert)
			s := newSotW(t, cc, "")
			s.node = tt.node
			s.send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType})
			d := newDelta(t, cc, "")
			d.node = tt.node
			d.send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.ClusterType, ResourceNamesSubscribe: []string{"*"}})
			if tt.want == nil {
				refused += 2
				for kind, err := range map[string]error{"SotW": s.ended(), "Delta": d.ended()} {
					st, _ := status.FromError(err)
					if st.Code() != codes.PermissionDenied || !strings.Contains(st.Message(), "certificate") {
						t.Errorf("%s: stream ended with %v, want PermissionDenied", kind, err)
					}
				}
			} else {
				if got := sorted(names(t, s.recv())); !slices.Equal(got, tt.want) {
					t.Errorf("SotW: %v, want %v", got, tt.want)
				}
				if got := sorted(deltaNames(t, d.recv())); !slices.Equal(got, tt.want) {
					t.Errorf("Delta: %v, want %v", got, tt.want)
				}
			}
			if got := f.srv.Stats().IdentityMismatch; got != refused {
				t.Errorf("IdentityMismatch = %d, want %d", got, refused)
			}
		})
	}

	// A node named on a later request is checked too.
	cc := pki.dialTLS(t, f.addr, certA)
	late := newSotW(t, cc, "")
	late.node = nil
	late.send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType})
	if got := sorted(names(t, late.recv())); !slices.Equal(got, viewA) {
		t.Errorf("no node yet: %v, want %v", got, viewA)
	}
	late.send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{"priv.a"}, Node: nodeIn(t, "late", "b")})
	if err := late.ended(); status.Code(err) != codes.PermissionDenied {
		t.Errorf("node claiming b later: stream ended with %v, want PermissionDenied", err)
	}
}

// TestNodeNamespaceOverMTLS shows what WithPeerNamespace changes: without
// it, under the same mTLS, the node's claim decides.
func TestNodeNamespaceOverMTLS(t *testing.T) {
	pki := newPKI(t)
	f := newScopedFixture(t, scopedItems, xds.WithTLSConfig(pki.serverTLS()), xds.WithNamespaceIsolation(nil))
	s := newSotW(t, pki.dialTLS(t, f.addr, pki.client(t, spiffeID("a"))), "")
	s.node = nodeIn(t, "p", "b")
	s.send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType})
	if got := sorted(names(t, s.recv())); !slices.Equal(got, []string{"pub.a", "pub.b", "rest.a"}) {
		t.Errorf("cert a, node b, node identity: %v, want b's view", got)
	}
}

// TestPeerNamespacePlaintext: with WithPeerNamespace and no TLS, no
// stream has a certificate, hence a namespace: a node claiming one is
// refused, a silent one sees what is visible to all.
func TestPeerNamespacePlaintext(t *testing.T) {
	f := newScopedFixture(t, scopedItems, xds.WithNamespaceIsolation(nil), xds.WithPeerNamespace(xds.SPIFFENamespace))
	cc := dial(t, f.addr)
	claims := newSotW(t, cc, "")
	claims.node = nodeIn(t, "p", "a")
	claims.send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType})
	if err := claims.ended(); status.Code(err) != codes.PermissionDenied {
		t.Errorf("node claiming a: %v, want PermissionDenied", err)
	}
	silent := newSotW(t, cc, "silent")
	silent.send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType})
	if got := sorted(names(t, silent.recv())); !slices.Equal(got, []string{"pub.a", "pub.b", "rest.a"}) {
		t.Errorf("silent node: %v", got)
	}
}

func TestSPIFFENamespace(t *testing.T) {
	tests := []struct {
		uris   []string
		want   string
		wantOK bool
	}{
		{[]string{"spiffe://cluster.local/ns/shop/sa/web"}, "shop", true},
		{[]string{"spiffe://example.org/ns/a/sa/b", "https://example.org/x"}, "a", true},
		{[]string{"https://example.org/ns/a/sa/b"}, "", false},
		{nil, "", false},
		{[]string{"spiffe://cluster.local/ns/a/sa/b", "spiffe://cluster.local/ns/c/sa/b"}, "", false},
		{[]string{"spiffe://cluster.local/ns/a"}, "", false},
		{[]string{"spiffe://cluster.local/ns//sa/b"}, "", false},
		{[]string{"spiffe://cluster.local/ns/a/sa/"}, "", false},
		{[]string{"spiffe://cluster.local/ns/a/sa/b/c"}, "", false},
		{[]string{"spiffe://cluster.local/sa/b/ns/a"}, "", false},
		{[]string{"spiffe:///ns/a/sa/b"}, "", false},
		{[]string{"spiffe://cluster.local/ns/a%2Fb/sa/c"}, "", false},
		{[]string{"spiffe://cluster.local/ns/a/sa/b?x=1"}, "", false},
		{[]string{"spiffe://cluster.local:8080/ns/a/sa/b"}, "", false},
	}
	for _, tt := range tests {
		cert := &x509.Certificate{}
		for _, s := range tt.uris {
			u, err := url.Parse(s)
			if err != nil {
				t.Fatal(err)
			}
			cert.URIs = append(cert.URIs, u)
		}
		if got, ok := xds.SPIFFENamespace(cert); got != tt.want || ok != tt.wantOK {
			t.Errorf("SPIFFENamespace(%v) = %q, %v; want %q, %v", tt.uris, got, ok, tt.want, tt.wantOK)
		}
	}
	if _, ok := xds.SPIFFENamespace(nil); ok {
		t.Error("SPIFFENamespace(nil) ok")
	}
}
