// Package securitytest helps tests of meshd's CA: keys, CSRs, a serving
// certificate for loopback, a TLS gRPC server on 127.0.0.1, and an
// agent's token file.
package securitytest

import (
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

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// Key returns a new ECDSA P-256 key.
func Key(t testing.TB) crypto.Signer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// CSR returns a PEM CSR of key naming uris.
func CSR(t testing.TB, key crypto.Signer, uris ...string) string {
	t.Helper()
	tmpl := &x509.CertificateRequest{}
	for _, u := range uris {
		p, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		tmpl.URIs = append(tmpl.URIs, p)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

// ServingCert returns a self-signed certificate for 127.0.0.1 and a pool
// trusting it.
func ServingCert(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key := Key(t)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(c)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

// Serve serves what register registers over TLS on a loopback port until
// the test ends, and returns a client connection to it.
func Serve(t testing.TB, register func(grpc.ServiceRegistrar)) *grpc.ClientConn {
	t.Helper()
	addr, tc := ServeTLS(t, register)
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(tc)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// ServeTLS serves what register registers over TLS on a loopback port
// until the test ends, and returns its address and a client TLS config
// that trusts it.
func ServeTLS(t testing.TB, register func(grpc.ServiceRegistrar)) (string, *tls.Config) {
	t.Helper()
	cert, pool := ServingCert(t)
	gs := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}})))
	register(gs)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = gs.Serve(lis) }()
	t.Cleanup(func() {
		gs.Stop()
		<-done
	})
	return lis.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
}
