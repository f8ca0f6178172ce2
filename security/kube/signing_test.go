package kube

import (
	"context"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"
	pb "istio.io/api/security/v1alpha1"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/meshd/meshd/security"
	"github.com/meshd/meshd/security/caserver"
	"github.com/meshd/meshd/security/securitytest"
)

// TestSigningWithTokenReview signs over TLS with tokens checked by the
// real API server: a's token gets a's certificate, and a's token asking
// for b's identity is refused.
func TestSigningWithTokenReview(t *testing.T) {
	c, env := newClient(t)
	ns := namespace(t, c, "a", "b")
	root, err := security.GenerateRoot(td, time.Now(), time.Hour*24)
	if err != nil {
		t.Fatal(err)
	}
	svc := caserver.New(security.NewStaticAuthority(root), NewTokenReviewer(c), func() spiffeid.TrustDomain { return td })
	client := pb.NewIstioCertificateServiceClient(securitytest.Serve(t, svc.Register))
	tokenA := token(t, c, ns, "a", DefaultAudience)
	idOf := func(sa string) string { return "spiffe://cluster.local/ns/" + ns + "/sa/" + sa }
	call := func(tok, csrURI string) (*pb.IstioCertificateResponse, error) {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
		return client.CreateCertificate(ctx, &pb.IstioCertificateRequest{Csr: securitytest.CSR(t, securitytest.Key(t), csrURI)})
	}
	resp, err := call(tokenA, idOf("a"))
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := security.ParseCerts([]byte(resp.CertChain[0]))
	if err != nil || leaf[0].URIs[0].String() != idOf("a") {
		t.Fatalf("leaf for a: %v %v", leaf[0].URIs, err)
	}
	cases := []struct {
		name, token, uri string
		code             codes.Code
	}{
		{"a's token asking for b", tokenA, idOf("b"), codes.PermissionDenied},
		{"a token for another audience", token(t, c, ns, "b", "elsewhere"), idOf("b"), codes.Unauthenticated},
		{"an expired token", expiredToken(t, env, ns, "b"), idOf("b"), codes.Unauthenticated},
		{"garbage", "garbage", idOf("b"), codes.Unauthenticated},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := call(tc.token, tc.uri); status.Code(err) != tc.code {
				t.Fatalf("got %v, want %s", err, tc.code)
			}
		})
	}
	st := svc.Stats()
	if st.Issued != 1 || st.Refused[caserver.ReasonIdentityMismatch] != 1 || st.Refused[caserver.ReasonExpiredToken] != 1 {
		t.Errorf("stats %+v", st)
	}
}
