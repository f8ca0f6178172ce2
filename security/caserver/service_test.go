package caserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/spiffe/go-spiffe/v2/bundle/x509bundle"
	"github.com/spiffe/go-spiffe/v2/svid/x509svid"
	pb "istio.io/api/security/v1alpha1"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/meshd/meshd/security"
)

func TestSignOverTLS(t *testing.T) {
	s, _ := newService(t)
	client := serve(t, s)
	ctx := withToken(context.Background(), "Bearer web-token")
	resp, err := client.CreateCertificate(ctx, &pb.IstioCertificateRequest{
		Csr: csrPEM(t, ecKey(t), "spiffe://cluster.local/ns/shop/sa/web"), ValidityDuration: 3600})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.CertChain) != 2 {
		t.Fatalf("cert_chain has %d elements, want the leaf and the root bundle", len(resp.CertChain))
	}
	chain, err := security.ParseCerts([]byte(strings.Join(resp.CertChain[:len(resp.CertChain)-1], "")))
	if err != nil {
		t.Fatal(err)
	}
	roots, err := security.ParseCerts([]byte(resp.CertChain[len(resp.CertChain)-1]))
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := x509svid.Verify(chain, x509bundle.FromX509Authorities(td, roots))
	if err != nil {
		t.Fatal(err)
	}
	if id.String() != "spiffe://cluster.local/ns/shop/sa/web" {
		t.Fatalf("issued for %s", id)
	}
	if life := chain[0].NotAfter.Sub(chain[0].NotBefore); life > 3600e9+120e9 {
		t.Errorf("asked an hour, got %s", life)
	}
	if st := s.Stats(); st.Issued != 1 {
		t.Errorf("issued counted %d", st.Issued)
	}
}

func TestRefusals(t *testing.T) {
	s, _ := newService(t)
	client := serve(t, s)
	p224, _ := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	good := csrPEM(t, ecKey(t))
	cases := []struct {
		name   string
		header string
		csr    string
		valid  int64
		code   codes.Code
		reason Reason
	}{
		{"no token", "", good, 0, codes.Unauthenticated, ReasonMissingToken},
		{"not bearer", "Basic d2ViOnB3", good, 0, codes.Unauthenticated, ReasonMalformedToken},
		{"garbage", "Bearer garbage with spaces", good, 0, codes.Unauthenticated, ReasonMalformedToken},
		{"unknown token", "Bearer who-knows", good, 0, codes.Unauthenticated, ReasonUnknownToken},
		{"expired token", "Bearer old-token", good, 0, codes.Unauthenticated, ReasonExpiredToken},
		{"another identity", "Bearer web-token", csrPEM(t, ecKey(t), "spiffe://cluster.local/ns/shop/sa/admin"), 0, codes.PermissionDenied, ReasonIdentityMismatch},
		{"malformed CSR", "Bearer web-token", "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n", 0, codes.InvalidArgument, ReasonMalformedCSR},
		{"oversized CSR", "Bearer web-token", good + strings.Repeat("x", security.DefaultMaxCSRBytes), 0, codes.InvalidArgument, ReasonCSRTooLarge},
		{"unsupported key", "Bearer web-token", csrPEM(t, p224), 0, codes.InvalidArgument, ReasonUnsupportedKey},
		{"negative validity", "Bearer web-token", good, -5, codes.InvalidArgument, ReasonBadValidity},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := s.Stats().Refused[tc.reason]
			_, err := client.CreateCertificate(withToken(context.Background(), tc.header),
				&pb.IstioCertificateRequest{Csr: tc.csr, ValidityDuration: tc.valid})
			st, _ := status.FromError(err)
			if st.Code() != tc.code || !strings.Contains(st.Message(), string(tc.reason)) {
				t.Fatalf("got %v, want %s with reason %s", err, tc.code, tc.reason)
			}
			if got := s.Stats().Refused[tc.reason]; got != before+1 {
				t.Errorf("refusals for %s: %d, want %d", tc.reason, got, before+1)
			}
		})
	}
	if s.Stats().Issued != 0 {
		t.Error("a refused request issued a certificate")
	}
}
