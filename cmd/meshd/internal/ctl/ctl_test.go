package ctl

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/meshd/meshd/cmd/meshd/app"
	"github.com/meshd/meshd/cmd/meshd/app/apptest"
	"github.com/meshd/meshd/cmd/meshd/internal/debugui"
	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest"
)

// startMeshd runs meshd on the demo mesh, on free loopback ports, until
// the test ends, and returns its debug and xDS addresses.
func startMeshd(t *testing.T) (debugAddr, xdsAddr string) {
	t.Helper()
	cfg := app.DefaultConfig()
	cfg.XDSAddr, cfg.DebugAddr = "127.0.0.1:0", "127.0.0.1:0"
	a, stop := apptest.Start(t, cfg)
	t.Cleanup(stop)
	return a.DebugAddr(), a.XDSAddr()
}

// ctl runs a command line and returns its exit code, output and errors.
func ctl(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := Run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// wantRun runs a command line that must succeed and returns its output.
func wantRun(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := ctl(args...)
	if code != 0 {
		t.Fatalf("meshd %v: exit %d, %s", args, code, errOut)
	}
	return out
}

func TestStatus(t *testing.T) {
	addr, _ := startMeshd(t)
	out := wantRun(t, "status", "--addr", addr)
	for _, want := range []string{"graph version", "all synced", "SOURCE", "folder/Service", "0 problems, 0 errors"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	var s Status
	if err := json.Unmarshal([]byte(wantRun(t, "status", "--addr", addr, "-o", "json")), &s); err != nil {
		t.Fatal(err)
	}
	if s.Collections == 0 || len(s.Unsynced) != 0 || len(s.Sources) == 0 || s.Errors != 0 {
		t.Errorf("status -o json: %+v", s)
	}
	for _, src := range s.Sources {
		if src.Name == "folder/Service" && (src.Items == 0 || !src.Synced) {
			t.Errorf("source %+v, want synced with items", src)
		}
	}
}

func TestProxies(t *testing.T) {
	addr, xdsAddr := startMeshd(t)
	if out := wantRun(t, "proxies", "--addr", addr); !strings.Contains(out, "no proxies") {
		t.Errorf("proxies before any connects: %s", out)
	}
	// A real ADS stream, which subscribes to every cluster.
	conn, err := grpc.NewClient(xdsAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ads := xdstest.NewSotW(t, conn, &corev3.Node{Id: "ctl-test"})
	ads.Send(&discoveryv3.DiscoveryRequest{TypeUrl: xds.ClusterType})
	resp := ads.Recv()
	ads.Ack(resp)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var r debugui.ProxiesResult
	for {
		if err := json.Unmarshal([]byte(wantRun(t, "proxies", "--addr", addr, "-o", "json")), &r); err != nil {
			t.Fatal(err)
		}
		if len(r.Proxies) == 1 && r.Proxies[0].Verdict == "up-to-date" || ctx.Err() != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !r.Available || len(r.Proxies) != 1 || r.Proxies[0].NodeID != "ctl-test" || r.Proxies[0].Verdict != "up-to-date" {
		t.Fatalf("proxies -o json: %+v", r)
	}
	out := wantRun(t, "proxies", "--addr", addr)
	for _, want := range []string{"NODE", "ctl-test", "up-to-date", "connected", "Cluster", "sent " + resp.VersionInfo + ", acked " + resp.VersionInfo + ", wildcard"} {
		if !strings.Contains(out, want) {
			t.Errorf("proxies lacks %q:\n%s", want, out)
		}
	}
}

// TestProxiesReconnect: a grpc-go client cancels its stream and opens
// another under the same node id. `meshd proxies` shows why the first
// closed, and then one proxy, connected, with the first in its history.
func TestProxiesReconnect(t *testing.T) {
	addr, xdsAddr := startMeshd(t)
	conn, err := grpc.NewClient(xdsAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	openClusters(t, conn, "reconnecting")()
	p := waitProxy(t, addr, func(p debugui.ProxyEntry) bool { return p.State == debugui.ProxyDisconnected })
	if p.CloseReason != string(xds.CloseClientCancelled) {
		t.Errorf("close reason of the cancelled stream = %q, want %q", p.CloseReason, xds.CloseClientCancelled)
	}
	if words := strings.Fields(wantRun(t, "proxies", "--addr", addr)); !strings.Contains(strings.Join(words, " "), "closed client cancelled") {
		t.Errorf("proxies does not say why the stream closed: %s", words)
	}

	defer openClusters(t, conn, "reconnecting")()
	p = waitProxy(t, addr, func(p debugui.ProxyEntry) bool { return p.State == debugui.ProxyConnected })
	if len(p.History) != 1 || p.History[0].CloseReason != string(xds.CloseClientCancelled) || p.History[0].Protocol != "sotw" {
		t.Errorf("history after the reconnect = %+v; want the cancelled stream", p.History)
	}
	out := wantRun(t, "proxies", "--addr", addr)
	if n := strings.Count(out, "reconnecting"); n != 1 || !strings.Contains(strings.Join(strings.Fields(out), " "), "earlier client cancelled, ended") {
		t.Errorf("proxies after the reconnect: want one row with the earlier stream:\n%s", out)
	}
}

// openClusters opens a SotW stream as node, asks for every cluster and
// waits for them; the returned func cancels the stream.
func openClusters(t *testing.T, conn *grpc.ClientConn, node string) context.CancelFunc {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(conn).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&discoveryv3.DiscoveryRequest{Node: &corev3.Node{Id: node}, TypeUrl: xds.ClusterType}); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	return cancel
}

// waitProxy waits until `meshd proxies -o json` lists exactly one proxy
// and ok accepts it.
func waitProxy(t *testing.T, addr string, ok func(debugui.ProxyEntry) bool) debugui.ProxyEntry {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var r debugui.ProxiesResult
		if err := json.Unmarshal([]byte(wantRun(t, "proxies", "--addr", addr, "-o", "json")), &r); err != nil {
			t.Fatal(err)
		}
		if len(r.Proxies) == 1 && ok(r.Proxies[0]) {
			return r.Proxies[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("proxies -o json: %+v", r.Proxies)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestExplain(t *testing.T) {
	addr, _ := startMeshd(t)
	out := wantRun(t, "explain", "ServiceInfo", "shop/reviews", "--addr", addr)
	for _, want := range []string{"ServiceInfo shop/reviews", "from input shop/reviews of folder/Service", "value:", `"Hostname": "reviews.shop.svc.cluster.local"`} {
		if !strings.Contains(out, want) {
			t.Errorf("explain lacks %q:\n%s", want, out)
		}
	}
	var r debugui.ExplainResult
	if err := json.Unmarshal([]byte(wantRun(t, "explain", "ServiceInfo", "shop/reviews", "--addr", addr, "-o", "json")), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 1 || !r.Results[0].Exists || r.Results[0].Input != "shop/reviews" {
		t.Errorf("explain -o json: %+v", r)
	}
	if code, _, errOut := ctl("explain", "NoSuchCollection", "x", "--addr", addr); code != 1 || !strings.Contains(errOut, "NoSuchCollection") {
		t.Errorf("explain of an unknown collection: exit %d, %q", code, errOut)
	}
}

func TestTranslate(t *testing.T) {
	dir := t.TempDir()
	const manifest = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop, annotations: {networking.istio.io/exportTo: "."}}
spec:
  selector: {app: web}
  ports: [{name: grpc, port: 9090}]
---
apiVersion: v1
kind: Service
metadata: {name: db, namespace: data}
spec:
  selector: {app: db}
  ports: [{name: tcp-db, port: 5432}]
`
	if err := os.WriteFile(filepath.Join(dir, "mesh.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	const node = "sidecar~10.0.0.9~client-0.data~data.svc.cluster.local"
	out := wantRun(t, "translate", "--config-dir", dir, "--node", node)
	for _, want := range []string{"every node sees the same resources", "Cluster", "outbound|9090||web.shop.svc.cluster.local", "outbound|5432||db.data.svc.cluster.local", "Listener"} {
		if !strings.Contains(out, want) {
			t.Errorf("translate lacks %q:\n%s", want, out)
		}
	}
	// Isolated, a proxy of namespace data does not see web, exported to
	// its own namespace only.
	var j Translated
	if err := json.Unmarshal([]byte(wantRun(t, "translate", "--config-dir", dir, "--node", node, "--namespace-isolation", "-o", "json")), &j); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, r := range j.Resources {
		names[r.Name] = true
		if len(r.Resource) == 0 || !strings.Contains(string(r.Resource), r.Name) {
			t.Errorf("resource %s: %s", r.Name, r.Resource)
		}
	}
	if j.Namespace != "data" || !j.Isolated || !names["outbound|5432||db.data.svc.cluster.local"] || names["outbound|9090||web.shop.svc.cluster.local"] {
		t.Errorf("translate --namespace-isolation: namespace %q, resources %v", j.Namespace, names)
	}
}

func TestBadCommandLines(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"status", "-o", "yaml"}, 2, `-o "yaml": want text or json`},
		{[]string{"explain", "Services"}, 2, "want COLLECTION and KEY"},
		{[]string{"translate", "--node", "x"}, 2, "--config-dir and --node are required"},
		{[]string{"translate", "--config-dir", "/nonexistent", "--node", "x"}, 1, "--config-dir: stat /nonexistent"},
		{[]string{"status", "--addr", "127.0.0.1:1"}, 1, "not reachable"},
		{[]string{"status", "--help"}, 0, ""},
	} {
		code, _, errOut := ctl(tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "goroutine") {
			t.Errorf("meshd %v: exit %d, %q; want %d with %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
	if _, out, _ := ctl("proxies", "--help"); !strings.Contains(out, "--addr HOST:PORT") || !strings.Contains(out, "Usage:") {
		t.Errorf("proxies --help: %s", out)
	}
	for _, name := range []string{"status", "proxies", "explain", "translate"} {
		_, out, _ := ctl(name, "--help")
		for _, l := range strings.Split(out, "\n") {
			if len(l) > 80 {
				t.Errorf("%s --help: a line of %d columns: %q", name, len(l), l)
			}
		}
	}
}
