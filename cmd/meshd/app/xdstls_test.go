package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	pb "istio.io/api/security/v1alpha1"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/meshd/meshd/cmd/meshd/internal/debugui"
	"github.com/meshd/meshd/security"
	"github.com/meshd/meshd/security/agent"
	"github.com/meshd/meshd/security/securitytest"
	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest"
)

// tlsMesh holds one service in each of namespaces shop and other, each
// exported to its own namespace only.
const tlsMesh = `apiVersion: v1
kind: Service
metadata: {name: front, namespace: shop, annotations: {networking.istio.io/exportTo: "."}}
spec:
  ports: [{name: grpc, port: 9080}]
---
apiVersion: v1
kind: Service
metadata: {name: vault, namespace: other, annotations: {networking.istio.io/exportTo: "."}}
spec:
  ports: [{name: grpc, port: 9080}]
`

const (
	frontCluster = "outbound|9080||front.shop.svc.cluster.local"
	frontToken   = "front-token"
)

// startTLSMeshd runs meshd on a folder holding files, with its CA in
// folder mode and namespace isolation, and extra flags; it returns meshd,
// the folder and the CA's bundle file, which verifies meshd's serving
// certificate.
func startTLSMeshd(t *testing.T, files map[string]string, extra ...string) (r *running, dir, bundle string) {
	t.Helper()
	dir = t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "mesh"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		writeFile(t, filepath.Join(dir, "mesh", name), content)
	}
	tokens := filepath.Join(dir, "tokens")
	writeFile(t, tokens, frontToken+" shop/front\n")
	args := append([]string{"--config-dir", filepath.Join(dir, "mesh"), "--push-debounce", "10ms", "--xds-addr", "127.0.0.1:0", "--debug-addr", "127.0.0.1:0",
		"--ca", "--ca-dir", filepath.Join(dir, "ca"), "--ca-tokens", tokens, "--ca-cert-ttl", "1h",
		"--namespace-isolation"}, extra...)
	cfg, err := ParseFlags(args, nil)
	if err != nil {
		t.Fatal(err)
	}
	r = start(t, cfg)
	r.waitReady(t)
	return r, dir, filepath.Join(dir, "ca", security.BundleFile)
}

// trusting is a client TLS config trusting the PEM bundle in file and
// presenting certs.
func trusting(t *testing.T, file string, certs ...tls.Certificate) *tls.Config {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatalf("%s: no certificate", file)
	}
	return &tls.Config{RootCAs: pool, Certificates: certs, MinVersion: tls.VersionTLS12}
}

// forcing makes c present cert whatever CAs the server asks for (a Go
// client otherwise sends no certificate the server's CAs did not sign).
func forcing(c *tls.Config, cert tls.Certificate) *tls.Config {
	c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
	return c
}

// workloadCert obtains a certificate from meshd's CA with token, over TLS.
func workloadCert(t *testing.T, addr, bundle, token string) tls.Certificate {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(trusting(t, bundle))))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	key := securitytest.Key(t)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
	resp, err := pb.NewIstioCertificateServiceClient(cc).CreateCertificate(ctx, &pb.IstioCertificateRequest{Csr: securitytest.CSR(t, key)})
	if err != nil {
		t.Fatalf("CreateCertificate: %v", err)
	}
	chain, err := security.ParseCerts([]byte(strings.Join(resp.CertChain[:len(resp.CertChain)-1], "")))
	if err != nil {
		t.Fatal(err)
	}
	c := tls.Certificate{PrivateKey: key, Leaf: chain[0]}
	for _, cert := range chain {
		c.Certificate = append(c.Certificate, cert.Raw)
	}
	return c
}

// clustersOver opens a SotW stream with creds as node, asks for every
// cluster and returns their names, or the error that ended the stream.
func clustersOver(t *testing.T, addr string, creds credentials.TransportCredentials, node *corev3.Node) ([]string, error) {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(ctx)
	if err != nil {
		return nil, err
	}
	if err := stream.Send(&discoveryv3.DiscoveryRequest{Node: node, TypeUrl: xds.ClusterType}); err != nil {
		return nil, err
	}
	r, err := stream.Recv()
	if err != nil {
		return nil, err
	}
	return clusterNames(t, r), nil
}

// nodeOf is a node of namespace ns, named in its metadata.
func nodeOf(t *testing.T, id, ns string) *corev3.Node {
	t.Helper()
	md, err := structpb.NewStruct(map[string]any{"NAMESPACE": ns})
	if err != nil {
		t.Fatal(err)
	}
	return &corev3.Node{Id: id, Metadata: md}
}

// TestXDSOverTLSFromTheCA runs meshd with its CA, which then serves xDS
// over TLS with a certificate of its own, and namespace isolation bound
// to the client certificates it issued: real grpc-go clients over TLS on
// loopback are served, or refused with a clear status, counted, logged
// and shown in the debug UI.
func TestXDSOverTLSFromTheCA(t *testing.T) {
	r, _, bundle := startTLSMeshd(t, map[string]string{"mesh.yaml": tlsMesh})
	addr := r.app.XDSAddr()
	front := workloadCert(t, addr, bundle, frontToken)
	stranger := xdstest.NewCA(t)
	tests := []struct {
		name  string
		creds credentials.TransportCredentials
		node  *corev3.Node
		want  []string
		code  codes.Code
	}{
		{"certificate of shop, node of shop", credentials.NewTLS(trusting(t, bundle, front)), nodeOf(t, "front-0.shop", "shop"), []string{frontCluster}, codes.OK},
		{"certificate of shop, node of other", credentials.NewTLS(trusting(t, bundle, front)), nodeOf(t, "liar-0.other", "other"), nil, codes.PermissionDenied},
		{"no certificate", credentials.NewTLS(trusting(t, bundle)), nodeOf(t, "nobody", "shop"), nil, codes.Unauthenticated},
		{"certificate of another CA", credentials.NewTLS(forcing(trusting(t, bundle), stranger.Workload(t, "spiffe://cluster.local/ns/shop/sa/front"))),
			nodeOf(t, "forger", "shop"), nil, codes.Unavailable},
		{"plaintext", insecure.NewCredentials(), nodeOf(t, "plain", "shop"), nil, codes.Unavailable},
	}
	for _, tc := range tests {
		got, err := clustersOver(t, addr, tc.creds, tc.node)
		if status.Code(err) != tc.code || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, %v; want %v, %s", tc.name, got, err, tc.want, tc.code)
		}
	}

	_, metrics := r.get(t, "/metrics")
	for _, want := range []string{"meshd_xds_identity_mismatch_total 1", "meshd_xds_unauthenticated_streams_total 1"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	for _, want := range []string{"node's namespace differs from its certificate's", "stream without a verified client certificate refused"} {
		if !strings.Contains(r.log.String(), want) {
			t.Errorf("not logged: %q", want)
		}
	}
	checkProxiesShown(t, r, front.Leaf.NotAfter)
}

// checkProxiesShown checks the debug UI's proxies: the one served with
// its identity and certificate expiry, the liar with its identity and
// why it was refused, the anonymous one without identity.
func checkProxiesShown(t *testing.T, r *running, expires time.Time) {
	t.Helper()
	_, body := r.get(t, "/debug/api/proxies")
	var res debugui.ProxiesResult
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatal(err)
	}
	byNode := map[string]debugui.ProxyEntry{}
	for _, p := range res.Proxies {
		byNode[p.NodeID] = p
	}
	const frontID = "spiffe://cluster.local/ns/shop/sa/front"
	if p := byNode["front-0.shop"]; p.Identity != frontID || !p.CertificateExpiry.Equal(expires) {
		t.Errorf("served proxy shown as %q, expiring %v; want %s, %v", p.Identity, p.CertificateExpiry, frontID, expires)
	}
	if p := byNode["liar-0.other"]; p.Identity != frontID || !strings.Contains(p.CloseError, `node names namespace "other" but the client certificate names "shop"`) {
		t.Errorf("refused proxy shown as %q, closed with %q", p.Identity, p.CloseError)
	}
	if p, ok := byNode["nobody"]; !ok || p.Identity != "" || !strings.Contains(p.CloseError, "no verified client certificate") {
		t.Errorf("anonymous proxy shown as %+v", p)
	}
}

// servedSerial is the serial of the certificate meshd presents to a new
// TLS handshake on addr, verified by bundle for the name 127.0.0.1.
func servedSerial(t *testing.T, addr, bundle string) string {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, trusting(t, bundle))
	if err != nil {
		t.Fatalf("TLS handshake with meshd: %v", err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
}

// TestServingCertRotationKeepsStreams renews meshd's serving certificate
// while streams are open: new handshakes get the new certificate, and
// every open stream stays and is still pushed the next change.
func TestServingCertRotationKeepsStreams(t *testing.T) {
	r, dir, bundle := startTLSMeshd(t, map[string]string{"mesh.yaml": tlsMesh})
	addr := r.app.XDSAddr()
	front := workloadCert(t, addr, bundle, frontToken)
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(trusting(t, bundle, front))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	var streams []*xdstest.SotW
	for _, id := range []string{"front-0.shop", "front-1.shop", "front-2.shop"} {
		s := xdstest.NewSotW(t, cc, nodeOf(t, id, "shop"))
		s.Send(&discoveryv3.DiscoveryRequest{TypeUrl: xds.ClusterType})
		s.Ack(s.Recv())
		streams = append(streams, s)
	}

	before := servedSerial(t, addr, bundle)
	if err := r.app.serving.renew(); err != nil {
		t.Fatal(err)
	}
	if after := servedSerial(t, addr, bundle); after == before {
		t.Fatalf("serial %s served after the renewal too", after)
	}

	const more = "apiVersion: v1\nkind: Service\nmetadata: {name: cart, namespace: shop}\nspec:\n  ports: [{name: grpc, port: 9080}]\n"
	writeFile(t, filepath.Join(dir, "mesh", "cart.yaml"), more)
	for i, s := range streams {
		if got := clusterNames(t, s.Recv()); !slices.Contains(got, "outbound|9080||cart.shop.svc.cluster.local") {
			t.Errorf("stream %d after the renewal: %v", i, got)
		}
	}
	for _, p := range r.app.xds.Proxies() {
		if !p.Connected {
			t.Errorf("stream %d (%s) ended: %s", p.ID, p.NodeID, p.CloseError)
		}
	}
}

// TestServingCertDue checks when the serving certificate is renewed: at
// half its life.
func TestServingCertDue(t *testing.T) {
	root, err := security.GenerateRoot(spiffeid.RequireTrustDomainFromString("cluster.local"), time.Now(), 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	sc := newServingCert(security.NewStaticAuthority(root, security.WithLeafTTL(time.Hour)), []string{"localhost", "127.0.0.1", "::1"},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if !sc.due(time.Now()) {
		t.Error("no certificate yet, and not due")
	}
	if err := sc.renew(); err != nil {
		t.Fatal(err)
	}
	leaf := sc.current().Leaf
	if len(leaf.DNSNames) != 1 || len(leaf.IPAddresses) != 2 {
		t.Errorf("SANs %v %v", leaf.DNSNames, leaf.IPAddresses)
	}
	half := leaf.NotBefore.Add(leaf.NotAfter.Sub(leaf.NotBefore) / 2)
	if sc.due(half.Add(-time.Second)) || !sc.due(half) {
		t.Errorf("due before half life, or not at it (%v)", half)
	}
}

// TestPlaintextPort: without --xds-plaintext-addr a plaintext client
// cannot connect (TestXDSOverTLSFromTheCA); with it, the plaintext port
// serves what --xds-anonymous allows.
func TestPlaintextPort(t *testing.T) {
	for _, tc := range []struct {
		anonymous string
		want      []string
		code      codes.Code
	}{
		{"", nil, codes.Unauthenticated},
		{AnonymousNode, []string{frontCluster}, codes.OK},
	} {
		extra := []string{"--xds-plaintext-addr", "127.0.0.1:0"}
		if tc.anonymous != "" {
			extra = append(extra, "--xds-anonymous", tc.anonymous)
		}
		r, _, _ := startTLSMeshd(t, map[string]string{"mesh.yaml": tlsMesh}, extra...)
		got, err := clustersOver(t, r.app.XDSPlaintextAddr(), insecure.NewCredentials(), nodeOf(t, "local", "shop"))
		if status.Code(err) != tc.code || !slices.Equal(got, tc.want) {
			t.Errorf("--xds-anonymous %q: %v, %v; want %v, %s", tc.anonymous, got, err, tc.want, tc.code)
		}
	}
}

// TestAgentBootstrappedClient runs meshd agent's library against meshd
// with its CA, and a grpc-go xDS client on the bootstrap it wrote: the
// client reaches meshd over TLS with the workload certificate (gRFC A65
// channel credentials), is served its namespace's view, makes an RPC to
// the backend meshd names, and shows in the registry with its identity.
func TestAgentBootstrappedClient(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.21:0")
	if err != nil {
		t.Skipf("loopback alias unavailable: %v", err)
	}
	backend := grpc.NewServer(grpc.ChainUnaryInterceptor(tellPeer))
	healthpb.RegisterHealthServer(backend, health.NewServer())
	go backend.Serve(lis)
	t.Cleanup(backend.Stop)
	mesh := fmt.Sprintf(mtlsMesh, lis.Addr().(*net.TCPAddr).Port)
	r, dir, bundle := startTLSMeshd(t, map[string]string{"mesh.yaml": mesh})

	out := filepath.Join(dir, "workload")
	tokenFile := securitytest.TokenFile(t, dir, frontToken)
	caTLS := trusting(t, bundle)
	a, err := agent.New(agent.Config{CAAddr: r.app.XDSAddr(), XDSAddr: r.app.XDSAddr(), CATLS: caTLS, XDSTLS: true,
		TokenFile: tokenFile, Namespace: "shop", ServiceAccount: "front", PodName: "front-0", PodIP: "127.0.0.22", OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if err := a.WriteBootstrap(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Renew(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, agent.BootstrapFile))
	if err != nil {
		t.Fatal(err)
	}
	cc := xdsClient(t, meshWorkload{bootstrap: b}, "echo.shop.svc.cluster.local:7000")
	expect(t, "RPC routed by meshd over TLS", cc, "Check", codes.OK, "plaintext")

	const node = "sidecar~127.0.0.22~front-0.shop~shop.svc.cluster.local"
	for _, p := range r.app.xds.Proxies() {
		if p.NodeID == node {
			if p.Identity != "spiffe://cluster.local/ns/shop/sa/front" || !p.Connected {
				t.Errorf("agent's client in the registry as %q, connected %v", p.Identity, p.Connected)
			}
			return
		}
	}
	t.Errorf("no proxy %s in the registry", node)
}
