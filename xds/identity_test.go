package xds_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/url"
	"slices"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest"
)

// dialTLS connects to addr trusting ca and presenting cert.
func dialTLS(t *testing.T, ca *xdstest.CA, addr string, cert tls.Certificate) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(ca.ClientConfig(cert))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

func spiffeID(ns string) string { return "spiffe://cluster.local/ns/" + ns + "/sa/default" }

// TestPeerNamespace serves the scoped clusters with namespace isolation
// bound to the client certificate's SPIFFE ID over mTLS on 127.0.0.1. A
// proxy is served its certificate's namespace's view whatever its node
// leaves unsaid, and a node naming another namespace than its
// certificate's is refused with PermissionDenied.
func TestPeerNamespace(t *testing.T) {
	ca := xdstest.NewCA(t)
	f := newScopedFixture(t, scopedItems, xds.WithTLSConfig(ca.ServerConfig(ca.Server(t), true)),
		xds.WithNamespaceIsolation(nil), xds.WithPeerNamespace(xds.SPIFFENamespace))
	certA, certB, certNone := ca.Client(t, spiffeID("a")), ca.Client(t, spiffeID("b")), ca.Client(t)
	viewA := []string{"priv.a", "pub.a", "pub.b", "shared.a"}
	viewPublic := []string{"pub.a", "pub.b", "rest.a"}

	istioNode := func(ns string) *corev3.Node {
		return &corev3.Node{Id: "sidecar~10.0.0.1~pod-1." + ns + "~" + ns + ".svc.cluster.local"}
	}
	tests := []struct {
		name string
		cert tls.Certificate
		node *corev3.Node
		want []string // nil: refused
	}{
		{"cert a, node silent", certA, nodeIn(t, "p", ""), viewA},
		{"cert a, node a", certA, nodeIn(t, "p", "a"), viewA},
		{"cert a, node claims b", certA, nodeIn(t, "p", "b"), nil},
		{"cert a, Istio node id of b", certA, istioNode("b"), nil},
		{"cert a, Istio node id of a", certA, istioNode("a"), viewA},
		{"cert b, node silent", certB, nodeIn(t, "p", ""), viewPublic},
		{"cert b, node claims a", certB, nodeIn(t, "p", "a"), nil},
		{"cert without namespace, node silent", certNone, nodeIn(t, "p", ""), viewPublic},
		{"cert without namespace, node claims a", certNone, nodeIn(t, "p", "a"), nil},
	}
	var refused uint64
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want == nil {
				refused += 2
			}
			checkPeerNamespace(t, ca, f.addr, tt.cert, tt.node, tt.want)
			if got := f.srv.Stats().IdentityMismatch; got != refused {
				t.Errorf("IdentityMismatch = %d, want %d", got, refused)
			}
		})
	}

	checkLateNodeClaim(t, ca, f.addr, certA, viewA)
}

// TestNodeNamespaceOverMTLS shows what WithPeerNamespace changes: without
// it, under the same mTLS, the node's claim decides.
func TestNodeNamespaceOverMTLS(t *testing.T) {
	ca := xdstest.NewCA(t)
	f := newScopedFixture(t, scopedItems, xds.WithTLSConfig(ca.ServerConfig(ca.Server(t), true)), xds.WithNamespaceIsolation(nil))
	s := xdstest.NewSotW(t, dialTLS(t, ca, f.addr, ca.Client(t, spiffeID("a"))), nodeIn(t, "p", "b"))
	s.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType})
	if got := sorted(names(t, s.Recv())); !slices.Equal(got, []string{"pub.a", "pub.b", "rest.a"}) {
		t.Errorf("cert a, node b, node identity: %v, want b's view", got)
	}
}

// TestPeerNamespacePlaintext: with WithPeerNamespace and no TLS, no
// stream has a certificate. By default every such stream is refused with
// Unauthenticated and counted; with AnonymousPublic a node claiming a
// namespace is refused, a silent one sees what is visible to all.
func TestPeerNamespacePlaintext(t *testing.T) {
	strict := newScopedFixture(t, scopedItems, xds.WithNamespaceIsolation(nil), xds.WithPeerNamespace(xds.SPIFFENamespace))
	for _, node := range []*corev3.Node{nodeIn(t, "p", "a"), {Id: "silent"}} {
		s := xdstest.NewSotW(t, dial(t, strict.addr), node)
		s.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType})
		if err := s.Ended(); status.Code(err) != codes.Unauthenticated {
			t.Errorf("node %s by default: %v, want Unauthenticated", node.Id, err)
		}
	}
	if got := strict.srv.Stats().Unauthenticated; got != 2 {
		t.Errorf("Stats.Unauthenticated = %d, want 2", got)
	}

	f := newScopedFixture(t, scopedItems, xds.WithNamespaceIsolation(nil), xds.WithPeerNamespace(xds.SPIFFENamespace),
		xds.WithAnonymous(xds.AnonymousPublic))
	cc := dial(t, f.addr)
	claims := xdstest.NewSotW(t, cc, nodeIn(t, "p", "a"))
	claims.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType})
	if err := claims.Ended(); status.Code(err) != codes.PermissionDenied {
		t.Errorf("node claiming a: %v, want PermissionDenied", err)
	}
	silent := xdstest.NewSotW(t, cc, &corev3.Node{Id: "silent"})
	silent.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType})
	if got := sorted(names(t, silent.Recv())); !slices.Equal(got, []string{"pub.a", "pub.b", "rest.a"}) {
		t.Errorf("silent node: %v", got)
	}
}

func TestSPIFFENamespace(t *testing.T) {
	tests := []struct {
		uris   []string
		want   string
		wantOK bool
	}{
		{[]string{"spiffe://cluster.local/ns/shop/sa/web"}, "shop", true},
		{[]string{"spiffe://example.org/ns/a/sa/b", "https://example.org/x"}, "a", true},
		{[]string{"https://example.org/ns/a/sa/b"}, "", false},
		{nil, "", false},
		{[]string{"spiffe://cluster.local/ns/a/sa/b", "spiffe://cluster.local/ns/c/sa/b"}, "", false},
		{[]string{"spiffe://cluster.local/ns/a"}, "", false},
		{[]string{"spiffe://cluster.local/ns//sa/b"}, "", false},
		{[]string{"spiffe://cluster.local/ns/a/sa/"}, "", false},
		{[]string{"spiffe://cluster.local/ns/a/sa/b/c"}, "", false},
		{[]string{"spiffe://cluster.local/sa/b/ns/a"}, "", false},
		{[]string{"spiffe:///ns/a/sa/b"}, "", false},
		{[]string{"spiffe://cluster.local/ns/a%2Fb/sa/c"}, "", false},
		{[]string{"spiffe://cluster.local/ns/a/sa/b?x=1"}, "", false},
		{[]string{"spiffe://cluster.local:8080/ns/a/sa/b"}, "", false},
	}
	for _, tt := range tests {
		cert := &x509.Certificate{}
		for _, s := range tt.uris {
			u, err := url.Parse(s)
			if err != nil {
				t.Fatal(err)
			}
			cert.URIs = append(cert.URIs, u)
		}
		if got, ok := xds.SPIFFENamespace(cert); got != tt.want || ok != tt.wantOK {
			t.Errorf("SPIFFENamespace(%v) = %q, %v; want %q, %v", tt.uris, got, ok, tt.want, tt.wantOK)
		}
	}
	if _, ok := xds.SPIFFENamespace(nil); ok {
		t.Error("SPIFFENamespace(nil) ok")
	}
}

// checkPeerNamespace opens a SotW and a Delta stream over one TLS
// connection with cert, naming node, and checks that both see want, or
// are refused for the certificate when want is nil.
func checkPeerNamespace(t *testing.T, ca *xdstest.CA, addr string, cert tls.Certificate, node *corev3.Node, want []string) {
	t.Helper()
	cc := dialTLS(t, ca, addr, cert)
	s := xdstest.NewSotW(t, cc, node)
	s.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType})
	d := xdstest.NewDelta(t, cc, node)
	d.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.ClusterType, ResourceNamesSubscribe: []string{"*"}})
	if want == nil {
		for kind, err := range map[string]error{"SotW": s.Ended(), "Delta": d.Ended()} {
			st, _ := status.FromError(err)
			if st.Code() != codes.PermissionDenied || !strings.Contains(st.Message(), "certificate") {
				t.Errorf("%s: stream ended with %v, want PermissionDenied", kind, err)
			}
		}
	} else {
		if got := sorted(names(t, s.Recv())); !slices.Equal(got, want) {
			t.Errorf("SotW: %v, want %v", got, want)
		}
		if got := sorted(deltaNames(t, d.Recv())); !slices.Equal(got, want) {
			t.Errorf("Delta: %v, want %v", got, want)
		}
	}
}

// checkLateNodeClaim: a node named on a later request is checked too; a
// stream with cert that first sees viewA is ended when it later claims b.
func checkLateNodeClaim(t *testing.T, ca *xdstest.CA, addr string, cert tls.Certificate, viewA []string) {
	t.Helper()
	cc := dialTLS(t, ca, addr, cert)
	late := xdstest.NewSotW(t, cc, nil)
	late.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType})
	if got := sorted(names(t, late.Recv())); !slices.Equal(got, viewA) {
		t.Errorf("no node yet: %v, want %v", got, viewA)
	}
	late.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{"priv.a"}, Node: nodeIn(t, "late", "b")})
	if err := late.Ended(); status.Code(err) != codes.PermissionDenied {
		t.Errorf("node claiming b later: stream ended with %v, want PermissionDenied", err)
	}
}
