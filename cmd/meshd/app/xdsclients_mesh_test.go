package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshd/meshd/cmd/meshd/internal/debugui"
	"github.com/meshd/meshd/internal/xdsclients"
)

// The backends of the client mesh, one loopback address per pod. front
// has its own pod; echo has two ready pods and one not ready (whose
// backend listens, so picking it would show); canary has one. 127.0.0.15
// is a pod added and removed while the clients run.
const (
	frontIP   = "127.0.0.21"
	echoIP0   = "127.0.0.11"
	echoIP1   = "127.0.0.12"
	canaryIP  = "127.0.0.13"
	unreadyIP = "127.0.0.14"
	addedIP   = "127.0.0.15"
)

// clientMesh is one meshd on a config folder, the backends its pods
// stand for, and one running client of each implementation, all shared
// by the subtests of TestXDSClients.
type clientMesh struct {
	dir     string
	r       *running
	b       *xdsclients.Backends
	clients []*meshClient
}

// meshClient is one client of an implementation, or why there is none.
type meshClient struct {
	impl   xdsclients.Implementation
	node   string
	client xdsclients.Client
	skip   error
}

// startClientMesh writes the base mesh, starts meshd on it and a client
// of each implementation that can be installed.
func startClientMesh(t *testing.T) *clientMesh {
	t.Helper()
	b := xdsclients.StartBackends(t, frontIP, echoIP0, echoIP1, canaryIP, unreadyIP, addedIP)
	m := &clientMesh{dir: t.TempDir(), b: b}
	m.write(t, "services.yaml", meshServices(b.Port, "front", "echo", "canary"))
	m.write(t, "pods.yaml", meshPod("front-0", "front", frontIP, true)+meshPod("echo-0", "echo", echoIP0, true)+
		meshPod("echo-1", "echo", echoIP1, true)+meshPod("echo-2", "echo", unreadyIP, false)+
		meshPod("canary-0", "canary", canaryIP, true))
	cfg := DefaultConfig()
	cfg.ConfigDir, cfg.PushDebounce = m.dir, 10*time.Millisecond
	m.r = start(t, cfg)
	m.r.waitReady(t)
	for _, impl := range xdsclients.Implementations() {
		m.clients = append(m.clients, m.startClient(t, impl, "first"))
	}
	return m
}

// startClient starts a client of impl with a node id of its own, or
// records why it cannot run.
func (m *clientMesh) startClient(t *testing.T, impl xdsclients.Implementation, suffix string) *meshClient {
	t.Helper()
	c := &meshClient{impl: impl, node: "xds-" + impl.Name + "-" + suffix}
	if c.skip = impl.Install(); c.skip != nil {
		t.Logf("%s: %v", impl.Name, c.skip)
		return c
	}
	c.client = impl.Start(t, xdsclients.Bootstrap(m.r.app.XDSAddr(), c.node, map[string]string{"NAMESPACE": "ns"}))
	return c
}

// each runs check as a subtest for every client, skipping those whose
// implementation is not installed, and fails a client whose node NACKed
// anything meshd sent it.
func (m *clientMesh) each(t *testing.T, clients []*meshClient, check func(t *testing.T, c *meshClient)) {
	t.Helper()
	for _, c := range clients {
		t.Run(c.impl.Name, func(t *testing.T) {
			if c.skip != nil {
				t.Skipf("%s %s cannot be installed: %v", c.impl.Name, c.impl.Version(), c.skip)
			}
			check(t, c)
			m.noNACK(t, c.node)
		})
	}
}

// noNACK fails the test if meshd recorded a NACK from node.
func (m *clientMesh) noNACK(t *testing.T, node string) {
	t.Helper()
	for _, p := range m.r.proxies(t).Proxies {
		if p.NodeID != node && !strings.HasPrefix(p.NodeID, node+"#") {
			continue
		}
		for _, ts := range p.Types {
			if ts.LastNACK != nil || len(ts.Rejected) > 0 {
				t.Errorf("%s NACKed %s: %+v", node, ts.TypeURL, ts.LastNACK)
			}
		}
	}
}

func (m *clientMesh) write(t *testing.T, name, content string) {
	t.Helper()
	// Written beside and renamed: the folder source never reads half a file.
	tmp := filepath.Join(m.dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(m.dir, name)); err != nil {
		t.Fatal(err)
	}
}

func (m *clientMesh) remove(t *testing.T, name string) {
	t.Helper()
	if err := os.Remove(filepath.Join(m.dir, name)); err != nil {
		t.Fatal(err)
	}
}

// target is the xDS target of a service of the mesh.
func target(service string) string { return "xds:///" + service + ".ns.svc.cluster.local:7000" }

// calls makes n calls of method on service's target, with md.
func calls(t *testing.T, c *meshClient, service, method string, n int, md map[string]string) []xdsclients.Result {
	t.Helper()
	res, err := c.client.Call(context.Background(), xdsclients.Call{
		Target: target(service), Method: "/meshtest.Svc/" + method, Metadata: md, Count: n, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// until repeats n calls of method on service until ok holds for their
// results, for up to 30s, and returns those results.
func until(t *testing.T, c *meshClient, what, service, method string, n int, md map[string]string, ok func([]xdsclients.Result) bool) []xdsclients.Result {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res := calls(t, c, service, method, n, md)
		if ok(res) {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: never %s; last results: %v", c.node, what, summary(res))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// backendCounts counts the answers per backend address; a failed call
// counts under "code N".
func backendCounts(res []xdsclients.Result) map[string]int {
	out := map[string]int{}
	for _, r := range res {
		if r.Code != 0 {
			out[fmt.Sprintf("code %d", r.Code)]++
			continue
		}
		out[r.Backend]++
	}
	return out
}

// summary shows results compactly in a failure message.
func summary(res []xdsclients.Result) string {
	s := fmt.Sprint(backendCounts(res))
	for _, r := range res {
		if r.Code != 0 {
			return s + " (first error: " + r.Message + ")"
		}
	}
	return s
}

// only reports whether every call succeeded and was answered by one of
// addrs.
func only(addrs ...string) func([]xdsclients.Result) bool {
	return func(res []xdsclients.Result) bool {
		for _, r := range res {
			if r.Code != 0 || !contains(addrs, r.Backend) {
				return false
			}
		}
		return len(res) > 0
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// proxyEntry returns the proxies API entry of node's latest stream.
func (m *clientMesh) proxyEntry(t *testing.T, node string) debugui.ProxyEntry {
	t.Helper()
	return m.r.proxy(t, node, "listed", func(debugui.ProxyEntry) bool { return true })
}

func meshServices(port int, names ...string) string {
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, `apiVersion: v1
kind: Service
metadata: {name: %s, namespace: ns}
spec:
  selector: {app: %s}
  ports:
  - {name: grpc, port: 7000, targetPort: %d, appProtocol: grpc}
---
`, n, n, port)
	}
	return b.String()
}

func meshPod(name, app, ip string, ready bool) string {
	status := "True"
	if !ready {
		status = "False"
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: ns, labels: {app: %s}}
spec:
  containers: [{name: app, image: example.com/app}]
status:
  phase: Running
  podIP: %s
  podIPs: [{ip: %s}]
  conditions: [{type: Ready, status: "%s"}]
---
`, name, app, ip, ip, status)
}
