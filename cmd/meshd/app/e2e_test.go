package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

	"github.com/meshd/meshd/cmd/meshd/internal/demo"
	"github.com/meshd/meshd/xds/xdstest"
)

// copyDemo writes the demo mesh into a fresh directory and returns it.
func copyDemo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, demo.FS); err != nil {
		t.Fatal(err)
	}
	return dir
}

// adsClient is a proxy with a SotW ADS stream subscribed to every
// cluster, which ACKs every response it reads.
type adsClient struct {
	t      *testing.T
	stream *xdstest.SotW
}

func newADSClient(t *testing.T, addr string) *adsClient {
	t.Helper()
	return &adsClient{t: t, stream: dialADS(t, addr, nil, &corev3.Node{Id: "e2e-test"}, true)}
}

// clusters waits for the next CDS response, ACKs it and returns the
// cluster names it holds.
func (c *adsClient) clusters() []string {
	c.t.Helper()
	r := c.stream.Recv()
	names := clusterNames(c.t, r)
	c.stream.Ack(r)
	return names
}

// until calls clusters until ok accepts them.
func (c *adsClient) until(what string, ok func([]string) bool) []string {
	c.t.Helper()
	for range 10 {
		if names := c.clusters(); ok(names) {
			return names
		}
	}
	c.t.Fatalf("clusters never %s", what)
	return nil
}

const (
	reviewsCluster = "outbound|9080||reviews.shop.svc.cluster.local"
	ratingsCluster = "outbound|9080||ratings.shop.svc.cluster.local"
)

const ratingsService = `apiVersion: v1
kind: Service
metadata:
  name: ratings
  namespace: shop
spec:
  selector:
    app: ratings
  ports:
  - name: grpc
    port: 9080
`

// TestConfigDirEndToEnd runs meshd on a folder, as
// `meshd --config-dir DIR --xds-addr 127.0.0.1:PORT --debug-addr 127.0.0.1:PORT`,
// and checks what a proxy and an operator see as the folder changes.
func TestConfigDirEndToEnd(t *testing.T) {
	dir := copyDemo(t)
	cfg, err := ParseFlags([]string{"--config-dir", dir, "--xds-addr", "127.0.0.1:0", "--debug-addr", "127.0.0.1:0",
		"--push-debounce", "10ms"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, cfg)
	r.waitReady(t)

	// Metrics: per-collection series for the sources, the model and xDS.
	_, metrics := r.get(t, "/metrics")
	for _, want := range []string{
		`meshd_krt_collection_size{collection="folder/Service",kind="static"} 4`,
		`meshd_krt_collection_recompute_duration_seconds_bucket{collection=`,
		`meshd_xds_connected_proxies 0`,
		`meshd_xds_resources{type="cds"} 4`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	ads := newADSClient(t, r.app.XDSAddr())
	if names := ads.clusters(); !slices.Contains(names, reviewsCluster) || slices.Contains(names, ratingsCluster) {
		t.Fatalf("initial clusters = %v, want %s and not %s", names, reviewsCluster, ratingsCluster)
	}

	// Adding a file adds its service's cluster.
	ratings := filepath.Join(dir, "ratings.yaml")
	if err := os.WriteFile(ratings, []byte(ratingsService), 0o644); err != nil {
		t.Fatal(err)
	}
	ads.until("gain ratings", func(n []string) bool { return slices.Contains(n, ratingsCluster) })
	checkBrokenFileKept(t, r, ratings)

	// Deleting the file removes its objects.
	if err := os.Remove(ratings); err != nil {
		t.Fatal(err)
	}
	ads.until("lose ratings", func(n []string) bool { return !slices.Contains(n, ratingsCluster) })

	// The UI sees the proxy.
	waitFor(t, "the proxy in /debug/api/proxies", func() (string, bool) {
		_, body := r.get(t, "/debug/api/proxies")
		return body, strings.Contains(body, "e2e-test")
	})
	if err := r.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// checkBrokenFileKept breaks the ratings Service's file and checks that
// this is a problem in the UI and the log, that meshd stays ready, and
// that the file's last good objects stay: a new subscriber still gets
// their cluster.
func checkBrokenFileKept(t *testing.T, r *running, ratings string) {
	t.Helper()
	if err := os.WriteFile(ratings, []byte("kind: Service\n  name: [broken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	problem := r.waitProblem(t, "the broken file in /debug/api/problems", "ratings.yaml")
	var probs struct {
		Problems []struct{ Source, Error string }
	}
	if err := json.Unmarshal([]byte(problem), &probs); err != nil || len(probs.Problems) == 0 {
		t.Fatalf("problems = %s (%v)", problem, err)
	}
	if code, _ := r.get(t, "/readyz"); code != 200 {
		t.Errorf("/readyz = %d after a bad edit, want 200: the last good config keeps serving", code)
	}
	waitFor(t, "the error in the log", func() (string, bool) {
		return "", strings.Contains(r.log.String(), "ratings.yaml")
	})
	late := newADSClient(t, r.app.XDSAddr())
	if names := late.clusters(); !slices.Contains(names, ratingsCluster) {
		t.Errorf("after a bad edit, clusters = %v, want %s kept", names, ratingsCluster)
	}
}

// waitFor polls cond until it holds, for up to 20s.
func waitFor(t *testing.T, what string, cond func() (string, bool)) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		v, ok := cond()
		if ok {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; last: %.500s", what, v)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMeshConfigFile checks that --mesh-config shapes what is served, and
// that a bad edit keeps the last good config while showing as a problem.
func TestMeshConfigFile(t *testing.T) {
	mc := filepath.Join(t.TempDir(), "mesh.yaml")
	if err := os.WriteFile(mc, []byte("domainSuffix: mesh.test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseFlags([]string{"--mesh-config", mc, "--xds-addr", "127.0.0.1:0", "--debug-addr", "127.0.0.1:0", "--push-debounce", "10ms"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, cfg)
	r.waitReady(t)
	ads := newADSClient(t, r.app.XDSAddr())
	const want = "outbound|9080||reviews.shop.svc.mesh.test"
	if names := ads.clusters(); !slices.Contains(names, want) {
		t.Fatalf("clusters = %v, want %s", names, want)
	}

	if err := os.WriteFile(mc, []byte("domainSuffix: .bad.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.waitProblem(t, "the mesh config problem", "mesh.yaml", "domainSuffix")
	late := newADSClient(t, r.app.XDSAddr())
	if names := late.clusters(); !slices.Contains(names, want) {
		t.Errorf("after a bad mesh config, clusters = %v, want %s kept", names, want)
	}
}

func TestMeshConfigInvalidAtStartup(t *testing.T) {
	mc := filepath.Join(t.TempDir(), "mesh.yaml")
	if err := os.WriteFile(mc, []byte("outboundTrafficPolicy: SOMETIMES\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.XDSAddr, cfg.DebugAddr, cfg.MeshConfigFile = "127.0.0.1:0", "127.0.0.1:0", mc
	a, err := New(cfg)
	if err == nil {
		a.Close()
		t.Fatal("New accepted an invalid mesh config")
	}
	if !strings.Contains(err.Error(), "--mesh-config") || !strings.Contains(err.Error(), "SOMETIMES") {
		t.Errorf("err = %v", err)
	}
}
