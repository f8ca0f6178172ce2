package security

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"net"
	"testing"
	"time"
)

func TestSignServing(t *testing.T) {
	a := NewStaticAuthority(root(t, t0), WithClock(func() time.Time { return t0 }), WithLeafTTL(2*time.Hour))
	p224, err := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		req     ServingRequest
		wantErr error
	}{
		{"no name", ServingRequest{Key: ecKey(t).Public()}, ErrNoServingNames},
		{"weak key", ServingRequest{Key: p224.Public(), DNSNames: []string{"meshd"}}, ErrUnsupportedKey},
		{"names and addresses", ServingRequest{Key: ecKey(t).Public(), DNSNames: []string{"meshd.meshd-system.svc", "localhost"},
			IPs: []net.IP{net.ParseIP("127.0.0.1")}, TTL: time.Hour}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			iss, err := a.SignServing(tt.req)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			checkServing(t, iss, tt.req)
		})
	}
	if _, err := NewAuthority(nil, td).SignServing(ServingRequest{Key: ecKey(t).Public(), DNSNames: []string{"x"}}); !errors.Is(err, ErrNotInitialized) {
		t.Errorf("before Init: %v", err)
	}
}

// checkServing checks that iss verifies, by each name asked for, against
// its bundle for server auth only, and names nothing else.
func checkServing(t *testing.T, iss Issued, req ServingRequest) {
	t.Helper()
	l := iss.Leaf
	if len(l.URIs) != 0 || len(l.DNSNames) != len(req.DNSNames) || len(l.IPAddresses) != len(req.IPs) || l.IsCA {
		t.Errorf("SANs: uris %v dns %v ips %v; IsCA %v", l.URIs, l.DNSNames, l.IPAddresses, l.IsCA)
	}
	if got := l.NotAfter.Sub(t0); got != req.TTL {
		t.Errorf("lives %s, want %s", got, req.TTL)
	}
	pool := x509.NewCertPool()
	for _, r := range iss.Bundle {
		pool.AddCert(r)
	}
	names := append([]string(nil), req.DNSNames...)
	for _, ip := range req.IPs {
		names = append(names, ip.String())
	}
	for _, n := range names {
		if _, err := l.Verify(x509.VerifyOptions{Roots: pool, DNSName: n, CurrentTime: t0}); err != nil {
			t.Errorf("does not verify as %s: %v", n, err)
		}
	}
	if _, err := l.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: t0, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("usable for client auth")
	}
}
