package caserver

import (
	"context"
	"crypto"
	"strconv"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"
	pb "istio.io/api/security/v1alpha1"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/meshd/meshd/security"
	"github.com/meshd/meshd/security/securitytest"
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
	return pb.NewIstioCertificateServiceClient(serveTB(t, s))
}

func serveTB(t testing.TB, s *Service) *grpc.ClientConn { return securitytest.Serve(t, s.Register) }

func mustID(t testing.TB) spiffeid.ID {
	id, err := security.Identity{Namespace: "shop", ServiceAccount: "web"}.ID(td)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func itoa(n int) string { return strconv.Itoa(n) }

func ecKey(t testing.TB) crypto.Signer { return securitytest.Key(t) }

func csrPEM(t testing.TB, key crypto.Signer, uris ...string) string {
	return securitytest.CSR(t, key, uris...)
}

func withToken(ctx context.Context, header string) context.Context {
	if header == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", header)
}
