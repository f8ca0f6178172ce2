package caserver

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"
	pb "istio.io/api/security/v1alpha1"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"

	"github.com/meshd/meshd/security"
)

var td = spiffeid.RequireTrustDomainFromString("cluster.local")

const tokensFile = `# test tokens
web-token   shop/web
admin-token shop/admin
old-token   shop/web 2020-01-01T00:00:00Z
`

// newService returns a service over a fresh root and the tokens above.
func newService(t testing.TB) (*Service, *security.Authority) {
	t.Helper()
	kp, err := security.GenerateRoot(td, time.Now(), time.Hour*24*365)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := security.ParseTokens([]byte(tokensFile))
	if err != nil {
		t.Fatal(err)
	}
	ca := security.NewStaticAuthority(kp)
	return New(ca, tokens, func() spiffeid.TrustDomain { return td }), ca
}

// serve serves s over TLS on a loopback port and returns a client.
func serve(t *testing.T, s *Service) pb.IstioCertificateServiceClient {
	t.Helper()
	cert, pool := servingCert(t)
	gs := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}})))
	s.Register(gs)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = gs.Serve(lis) }()
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cc.Close()
		gs.Stop()
		<-done
	})
	return pb.NewIstioCertificateServiceClient(cc)
}

// servingCert is a self-signed certificate for 127.0.0.1.
func servingCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key := ecKey(t)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(c)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

func ecKey(t testing.TB) crypto.Signer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func csrPEM(t testing.TB, key crypto.Signer, uris ...string) string {
	t.Helper()
	tmpl := &x509.CertificateRequest{}
	for _, u := range uris {
		p, _ := url.Parse(u)
		tmpl.URIs = append(tmpl.URIs, p)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

func withToken(ctx context.Context, header string) context.Context {
	if header == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", header)
}
