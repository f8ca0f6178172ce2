package app

import (
	"context"
	"crypto/tls"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest"
)

// adsAs returns an ADS client connected over mTLS presenting cert, and a
// context for its streams; both end with the test.
func adsAs(t *testing.T, ca *xdstest.CA, addr string, cert tls.Certificate) (discoveryv3.AggregatedDiscoveryServiceClient, context.Context) {
	t.Helper()
	creds := credentials.NewTLS(ca.ClientConfig(cert))
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(func() {
		cancel()
		cc.Close()
	})
	return discoveryv3.NewAggregatedDiscoveryServiceClient(cc), ctx
}

// cdsAs opens a SotW stream presenting cert, as a node claiming namespace
// ns ("": none), asks for every cluster and returns their names, or the
// error that ended the stream.
func cdsAs(t *testing.T, ca *xdstest.CA, addr string, cert tls.Certificate, ns string) ([]string, error) {
	t.Helper()
	ads, ctx := adsAs(t, ca, addr, cert)
	stream, err := ads.StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node := &corev3.Node{Id: "proxy"}
	if ns != "" {
		if node.Metadata, err = structpb.NewStruct(map[string]any{"NAMESPACE": ns}); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Send(&discoveryv3.DiscoveryRequest{Node: node, TypeUrl: xds.ClusterType}); err != nil {
		t.Fatal(err)
	}
	r, err := stream.Recv()
	if err != nil {
		return nil, err
	}
	return clusterNames(t, r), nil
}

// TestCertificateIdentityFlag runs meshd with mTLS, namespace isolation
// bound to the client certificate and a small subscription limit, and
// checks what proxies with SPIFFE certificates of namespaces a and b are
// served, and that refusals show in /metrics.
func TestCertificateIdentityFlag(t *testing.T) {
	ca := xdstest.NewCA(t)
	r := startCertificateIsolation(t, ca)
	addr := r.app.XDSAddr()
	certA := ca.Client(t, "spiffe://cluster.local/ns/a/sa/default")
	certB := ca.Client(t, "spiffe://cluster.local/ns/b/sa/default")

	both, public := []string{privCluster, pubCluster}, []string{pubCluster}
	for _, tc := range []struct {
		name string
		cert tls.Certificate
		ns   string
		want []string // nil: refused
	}{
		{"cert a, node silent", certA, "", both},
		{"cert a, node a", certA, "a", both},
		{"cert b, node silent", certB, "", public},
		{"cert b, node claims a", certB, "a", nil},
	} {
		got, err := cdsAs(t, ca, addr, tc.cert, tc.ns)
		if tc.want == nil {
			if status.Code(err) != codes.PermissionDenied {
				t.Errorf("%s: %v, %v; want PermissionDenied", tc.name, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}

	checkSubscribedNamesLimit(t, ca, addr, certA)

	_, metrics := r.get(t, "/metrics")
	for _, want := range []string{
		"meshd_xds_identity_mismatch_total 1",
		`meshd_xds_limit_exceeded_total{limit="subscribed_names"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if !strings.Contains(r.log.String(), "certificate") || !strings.Contains(r.log.String(), "stream ended by a limit") {
		t.Errorf("refusals not logged:\n%s", r.log)
	}
}

// startCertificateIsolation runs meshd on scopedServices with mTLS
// (server certificate and client CA from ca), namespace isolation bound to
// the client certificate and a limit of three subscribed names.
func startCertificateIsolation(t *testing.T, ca *xdstest.CA) *running {
	t.Helper()
	dir := t.TempDir()
	cert, key := xdstest.WriteKeyPair(t, dir, "server", ca.Server(t))
	if err := os.WriteFile(filepath.Join(dir, "services.yaml"), []byte(scopedServices), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseFlags([]string{"--config-dir", dir, "--xds-addr", "127.0.0.1:0", "--debug-addr", "127.0.0.1:0", "--push-debounce", "10ms",
		"--xds-tls-cert", cert, "--xds-tls-key", key, "--xds-client-ca", ca.WriteCA(t, dir),
		"--namespace-isolation", "--namespace-isolation-identity", "certificate", "--xds-max-subscribed-names", "3"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, cfg)
	r.waitReady(t)
	return r
}

// checkSubscribedNamesLimit subscribes, presenting cert, to four names,
// one over the limit of three: the server ends the stream.
func checkSubscribedNamesLimit(t *testing.T, ca *xdstest.CA, addr string, cert tls.Certificate) {
	t.Helper()
	ads, ctx := adsAs(t, ca, addr, cert)
	stream, err := ads.DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNamesSubscribe: []string{"w", "x", "y", "z"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("4 names with --xds-max-subscribed-names 3: %v, want ResourceExhausted", err)
	}
}

// TestExposesNodeClaim: isolation trusting the node's claim on a
// reachable xDS port is worth a warning at start.
func TestExposesNodeClaim(t *testing.T) {
	for _, tc := range []struct {
		addr      string
		isolation bool
		identity  string
		want      bool
	}{
		{"0.0.0.0:15010", true, IdentityNode, true},
		{"10.0.0.1:15010", true, "", true},
		{"127.0.0.1:15010", true, IdentityNode, false},
		{"0.0.0.0:15010", true, IdentityCertificate, false},
		{"0.0.0.0:15010", false, IdentityNode, false},
	} {
		c := DefaultConfig()
		c.XDSAddr, c.NamespaceIsolation, c.NamespaceIsolationIdentity = tc.addr, tc.isolation, tc.identity
		if got := exposesNodeClaim(c); got != tc.want {
			t.Errorf("%s, isolation %v, identity %q: %v, want %v", tc.addr, tc.isolation, tc.identity, got, tc.want)
		}
	}
}
