package caserver

import (
	"context"
	"testing"

	pb "istio.io/api/security/v1alpha1"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/meshd/meshd/security"
)

// FuzzCreateCertificate feeds the signing handler any header, CSR and
// validity. It must never panic nor fail with Internal; it must issue only
// for a known, unexpired token, and then only for that token's identity.
func FuzzCreateCertificate(f *testing.F) {
	s, _ := newService(f)
	good := csrPEM(f, ecKey(f))
	f.Add("Bearer web-token", good, int64(0))
	f.Add("Bearer admin-token", csrPEM(f, ecKey(f), "spiffe://cluster.local/ns/shop/sa/web"), int64(60))
	f.Add("Bearer old-token", good, int64(-1))
	f.Add("bearer web-token", good[:100], int64(1<<62))
	f.Add("", "", int64(0))
	want := map[string]string{
		"web-token":   "spiffe://cluster.local/ns/shop/sa/web",
		"admin-token": "spiffe://cluster.local/ns/shop/sa/admin",
	}
	f.Fuzz(func(t *testing.T, header, csr string, validity int64) {
		ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("authorization", header))
		resp, err := s.CreateCertificate(ctx, &pb.IstioCertificateRequest{Csr: csr, ValidityDuration: validity})
		if err != nil {
			switch status.Code(err) {
			case codes.Unauthenticated, codes.PermissionDenied, codes.InvalidArgument:
			default:
				t.Fatalf("refused with %v", err)
			}
			return
		}
		token, err := bearer(ctx)
		if err != nil || want[token] == "" {
			t.Fatalf("issued for header %q", header)
		}
		chain, err := security.ParseCerts([]byte(resp.CertChain[0]))
		if err != nil {
			t.Fatal(err)
		}
		if uris := chain[0].URIs; len(uris) != 1 || uris[0].String() != want[token] {
			t.Fatalf("token %q got a leaf naming %v", token, uris)
		}
	})
}
