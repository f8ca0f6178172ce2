package xds_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"slices"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"google.golang.org/protobuf/proto"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest"
)

// TestPlaintextBesideTLS serves one server on a TLS port, where client
// certificates are verified when given, and on a plaintext port. The
// registry names each stream's authenticated identity; the plaintext
// port's streams have none and get what WithAnonymous allows; a
// plaintext client on the TLS port does not connect.
func TestPlaintextBesideTLS(t *testing.T) {
	ca := xdstest.NewCA(t)
	tc := ca.ServerConfig(ca.Server(t), false)
	tc.ClientCAs, tc.ClientAuth = ca.Pool, tls.VerifyClientCertIfGiven
	plain, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := krt.NewGraph()
	items := krt.NewStatic[scoped](g, krt.WithName("scoped"))
	srv := xds.New(g, []xds.Source{xds.NewSource(xds.ClusterType, items, scopedCluster, xds.WithVisibility(scoped.visibility))},
		xds.WithDebounce(0), xds.WithTLSConfig(tc), xds.WithNamespaceIsolation(nil),
		xds.WithPeerNamespace(xds.SPIFFENamespace), xds.WithAnonymous(xds.AnonymousNodeClaim))
	items.Set(scopedItems...)
	addr := serve(t, g, srv, plain)

	cert := ca.Client(t, spiffeID("a"))
	secure := xdstest.NewSotW(t, dialTLS(t, ca, addr, cert), nodeIn(t, "secure", "a"))
	secure.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType})
	if got := sorted(names(t, secure.Recv())); !slices.Equal(got, []string{"priv.a", "pub.a", "pub.b", "shared.a"}) {
		t.Errorf("TLS stream of a: %v", got)
	}
	local := xdstest.NewSotW(t, dial(t, plain.Addr().String()), nodeIn(t, "local", "b"))
	local.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType})
	if got := sorted(names(t, local.Recv())); !slices.Equal(got, []string{"pub.a", "pub.b", "rest.a"}) {
		t.Errorf("plaintext stream claiming b: %v", got)
	}
	checkIdentities(t, srv, map[string]string{"secure": spiffeID("a"), "local": ""}, leafOf(t, cert).NotAfter)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = discovery.NewAggregatedDiscoveryServiceClient(dial(t, addr)).StreamAggregatedResources(ctx)
	if status.Code(err) != codes.Unavailable {
		t.Errorf("plaintext client on the TLS port: %v, want Unavailable", err)
	}
}

func scopedCluster(s scoped) (string, proto.Message) { return s.Name, edsCluster(s.Name) }

// checkIdentities checks the registry's identity of each node, and that
// the TLS one's certificate expiry is expires.
func checkIdentities(t *testing.T, srv *xds.Server, want map[string]string, expires time.Time) {
	t.Helper()
	for _, p := range srv.Proxies() {
		id, ok := want[p.NodeID]
		if !ok {
			continue
		}
		if p.Identity != id {
			t.Errorf("%s: Identity %q, want %q", p.NodeID, p.Identity, id)
		}
		if wantExp := id != ""; wantExp != !p.CertificateExpiry.IsZero() || (wantExp && !p.CertificateExpiry.Equal(expires)) {
			t.Errorf("%s: CertificateExpiry %v, want %v", p.NodeID, p.CertificateExpiry, expires)
		}
		delete(want, p.NodeID)
	}
	if len(want) > 0 {
		t.Errorf("not in the registry: %v", want)
	}
}

func leafOf(t *testing.T, cert tls.Certificate) *x509.Certificate {
	t.Helper()
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf
}
