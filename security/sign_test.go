package security

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/bundle/x509bundle"
	"github.com/spiffe/go-spiffe/v2/svid/x509svid"
)

func TestSignChecksTheCSR(t *testing.T) {
	caller := mustID(t, "shop", "web")
	p224, _ := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	rsa1024, _ := rsa.GenerateKey(rand.Reader, 1024)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	good := csrPEM(t, ecKey(t))
	corrupt := []byte(strings.Replace(string(good), "M", "N", 3))
	cases := []struct {
		name string
		csr  []byte
		ttl  time.Duration
		want error
	}{
		{"no SAN", good, 0, nil},
		{"the caller's SAN", csrPEM(t, ecKey(t), caller.String()), 0, nil},
		{"another identity", csrPEM(t, ecKey(t), mustID(t, "shop", "admin").String()), 0, ErrIdentityMismatch},
		{"the caller and another", csrPEM(t, ecKey(t), caller.String(), "spiffe://evil.example/ns/shop/sa/web"), 0, ErrIdentityMismatch},
		{"not PEM", []byte("hello"), 0, ErrMalformedCSR},
		{"a certificate, not a CSR", EncodeCerts(root(t, t0).Cert), 0, ErrMalformedCSR},
		{"corrupt", corrupt, 0, ErrMalformedCSR},
		{"too large", append(good, make([]byte, DefaultMaxCSRBytes)...), 0, ErrCSRTooLarge},
		{"P-224", csrPEM(t, p224), 0, ErrUnsupportedKey},
		{"RSA 1024", csrPEM(t, rsa1024), 0, ErrUnsupportedKey},
		{"Ed25519", csrPEM(t, edKey), 0, ErrUnsupportedKey},
		{"negative validity", good, -time.Second, ErrBadValidity},
	}
	a := NewStaticAuthority(root(t, t0), WithClock(func() time.Time { return t0 }))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := a.Sign(Request{CSR: tc.csr, ID: caller, TTL: tc.ttl})
			if tc.want == nil && err != nil {
				t.Fatalf("Sign: %v", err)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Sign: %v, want %v", err, tc.want)
			}
		})
	}
}

func TestSignIssuesAnSVIDOfTheCallerOnly(t *testing.T) {
	caller := mustID(t, "shop", "web")
	kp := root(t, t0)
	a := NewStaticAuthority(kp, WithClock(func() time.Time { return t0 }), WithLeafTTL(2*time.Hour))
	// The CSR's subject and DNS names are not copied.
	iss, err := a.Sign(Request{CSR: csrPEM(t, ecKey(t)), ID: caller})
	if err != nil {
		t.Fatal(err)
	}
	bundle := x509bundle.FromX509Authorities(td, iss.Bundle)
	id, _, err := x509svid.Verify(iss.Chain, bundle, x509svid.WithTime(t0.Add(time.Hour)))
	if err != nil {
		t.Fatalf("the leaf is no valid X.509-SVID: %v", err)
	}
	if id != caller {
		t.Errorf("leaf names %s, want %s", id, caller)
	}
	l := iss.Leaf
	if len(l.URIs) != 1 || len(l.DNSNames)+len(l.IPAddresses)+len(l.EmailAddresses) != 0 || l.IsCA {
		t.Errorf("leaf SANs: uris %v dns %v ips %v; IsCA %v", l.URIs, l.DNSNames, l.IPAddresses, l.IsCA)
	}
	if got := l.NotAfter.Sub(t0); got != 2*time.Hour {
		t.Errorf("leaf lives %s, want the leaf TTL 2h", got)
	}
	short, err := a.Sign(Request{CSR: csrPEM(t, ecKey(t)), ID: caller, TTL: time.Hour})
	if err != nil || short.Leaf.NotAfter.Sub(t0) != time.Hour {
		t.Errorf("asked 1h: %v, lives %s", err, short.Leaf.NotAfter.Sub(t0))
	}
	long, err := a.Sign(Request{CSR: csrPEM(t, ecKey(t)), ID: caller, TTL: 100 * time.Hour})
	if err != nil || long.Leaf.NotAfter.Sub(t0) != 2*time.Hour {
		t.Errorf("asked 100h: %v, lives %s; want capped at 2h", err, long.Leaf.NotAfter.Sub(t0))
	}
}

func TestSignWithAnIntermediate(t *testing.T) {
	r := root(t, t0)
	inter := intermediate(t, r)
	caPEM, _ := EncodeKey(inter.Key)
	kp, err := NewKeyPair(EncodeCerts(inter.Cert), caPEM, EncodeCerts(r.Cert))
	if err != nil {
		t.Fatal(err)
	}
	a := NewStaticAuthority(kp, WithClock(func() time.Time { return t0 }))
	iss, err := a.Sign(Request{CSR: csrPEM(t, ecKey(t)), ID: mustID(t, "a", "b")})
	if err != nil {
		t.Fatal(err)
	}
	if len(iss.Chain) != 2 || !iss.Chain[1].Equal(inter.Cert) {
		t.Fatalf("chain %d certificates, want the leaf and the intermediate", len(iss.Chain))
	}
	if len(iss.Bundle) != 1 || !iss.Bundle[0].Equal(r.Cert) {
		t.Fatalf("bundle is not the operator's root")
	}
	if _, _, err := x509svid.Verify(iss.Chain, x509bundle.FromX509Authorities(td, iss.Bundle), x509svid.WithTime(t0)); err != nil {
		t.Fatal(err)
	}
}

// intermediate returns a CA signed by r.
func intermediate(t *testing.T, r KeyPair) KeyPair {
	t.Helper()
	key := ecKey(t)
	serial, _ := randomSerial()
	tmpl := &x509.Certificate{SerialNumber: serial, NotBefore: t0.Add(-time.Hour), NotAfter: t0.Add(1000 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, r.Cert, key.Public(), r.Key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return KeyPair{Cert: c, Key: key, Chain: []*x509.Certificate{r.Cert}}
}

func TestNewKeyPairRefuses(t *testing.T) {
	r, other := root(t, t0), root(t, t0)
	rKey, _ := EncodeKey(r.Key)
	otherKey, _ := EncodeKey(other.Key)
	inter := intermediate(t, r)
	interKey, _ := EncodeKey(inter.Key)
	cases := []struct {
		name             string
		cert, key, chain []byte
		want             string
	}{
		{"a root", EncodeCerts(r.Cert), rKey, nil, ""},
		{"the wrong key", EncodeCerts(r.Cert), otherKey, nil, "does not match"},
		{"no certificate", []byte("x"), rKey, nil, "no PEM certificate"},
		{"no key", EncodeCerts(r.Cert), []byte("x"), nil, "no PEM private key"},
		{"an intermediate without chain", EncodeCerts(inter.Cert), interKey, nil, "self-signed root"},
		{"an intermediate with another root", EncodeCerts(inter.Cert), interKey, EncodeCerts(other.Cert), "does not chain"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewKeyPair(tc.cert, tc.key, tc.chain)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("NewKeyPair: %v, want %q", err, tc.want)
			}
		})
	}
}

func TestIdentity(t *testing.T) {
	id := mustID(t, "shop", "web")
	if id.String() != "spiffe://cluster.local/ns/shop/sa/web" {
		t.Fatalf("ID %s", id)
	}
	if got, ok := IdentityOf(id); !ok || got != (Identity{"shop", "web"}) {
		t.Fatalf("IdentityOf(%s) = %v, %v", id, got, ok)
	}
	for _, p := range []string{"/ns/shop", "/ns/shop/sa/web/x", "/x/shop/sa/web"} {
		other, _ := td.ID().ReplacePath(p)
		if _, ok := IdentityOf(other); ok {
			t.Errorf("IdentityOf(%s) accepted", other)
		}
	}
	if _, err := (Identity{"shop", "we/b"}).ID(td); err == nil {
		t.Error("a service account with a slash made an ID")
	}
}
