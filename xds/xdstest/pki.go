package xdstest

import (
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
	"sync/atomic"
	"testing"
	"time"
)

// CA is a test certificate authority. Its certificates are valid from an
// hour ago to an hour from now.
type CA struct {
	// Cert is the CA's certificate; Pool trusts it alone.
	Cert *x509.Certificate
	Pool *x509.CertPool

	key    *ecdsa.PrivateKey
	serial atomic.Int64
}

// NewCA makes a CA.
func NewCA(t testing.TB) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &CA{Cert: cert, Pool: x509.NewCertPool(), key: key}
	ca.Pool.AddCert(cert)
	ca.serial.Store(1)
	return ca
}

// Server issues a server certificate for 127.0.0.1 and "localhost".
func (ca *CA) Server(t testing.TB) tls.Certificate {
	t.Helper()
	return ca.issue(t, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "xds"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

// Client issues a client certificate with the given URI SANs, such as
// SPIFFE IDs ("spiffe://cluster.local/ns/a/sa/default").
func (ca *CA) Client(t testing.TB, uris ...string) tls.Certificate {
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
	return ca.issue(t, tmpl)
}

// ServerConfig serves cert and, if mutual, requires client certificates
// signed by the CA.
func (ca *CA) ServerConfig(cert tls.Certificate, mutual bool) *tls.Config {
	c := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if mutual {
		c.ClientCAs, c.ClientAuth = ca.Pool, tls.RequireAndVerifyClientCert
	}
	return c
}

// ClientConfig trusts the CA and presents certs (none: no client
// certificate).
func (ca *CA) ClientConfig(certs ...tls.Certificate) *tls.Config {
	return &tls.Config{RootCAs: ca.Pool, Certificates: certs, MinVersion: tls.VersionTLS12}
}

// WriteCA writes the CA's certificate as PEM into dir and returns the
// file's path.
func (ca *CA) WriteCA(t testing.TB, dir string) string {
	t.Helper()
	return writePEM(t, filepath.Join(dir, "ca.pem"), "CERTIFICATE", ca.Cert.Raw)
}

// WriteKeyPair writes cert and its private key as PEM files name.pem and
// name-key.pem into dir, and returns their paths.
func WriteKeyPair(t testing.TB, dir, name string, cert tls.Certificate) (certFile, keyFile string) {
	t.Helper()
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	return writePEM(t, filepath.Join(dir, name+".pem"), "CERTIFICATE", cert.Certificate[0]),
		writePEM(t, filepath.Join(dir, name+"-key.pem"), "PRIVATE KEY", key)
}

// issue signs tmpl (subject, SANs, extended usage) with the CA.
func (ca *CA) issue(t testing.TB, tmpl *x509.Certificate) tls.Certificate {
	t.Helper()
	key := newKey(t)
	tmpl.SerialNumber = big.NewInt(ca.serial.Add(1))
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func writePEM(t testing.TB, path, typ string, der []byte) string {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Workload issues a workload certificate for a SPIFFE ID, usable as both
// client and server certificate, as a mesh CA issues them.
func (ca *CA) Workload(t testing.TB, spiffeID string) tls.Certificate {
	t.Helper()
	u, err := url.Parse(spiffeID)
	if err != nil {
		t.Fatal(err)
	}
	return ca.issue(t, &x509.Certificate{
		URIs:        []*url.URL{u},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	})
}

// WriteWorkload writes cert as meshd's agent does, into dir:
// cert-chain.pem, key.pem and root-cert.pem (the CA).
func (ca *CA) WriteWorkload(t testing.TB, dir string, cert tls.Certificate) {
	t.Helper()
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(dir, "cert-chain.pem"), "CERTIFICATE", cert.Certificate[0])
	writePEM(t, filepath.Join(dir, "key.pem"), "PRIVATE KEY", key)
	writePEM(t, filepath.Join(dir, "root-cert.pem"), "CERTIFICATE", ca.Cert.Raw)
}
