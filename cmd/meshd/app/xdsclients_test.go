package app

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/internal/xdsclients"
)

// TestXDSClients runs every xDS client implementation (grpc-go, grpc-js,
// gRPC C-core; see internal/xdsclients) against one meshd serving a
// config folder, through the same steps: each step edits the folder,
// then checks, for every client, where its calls go. A NACK from any
// client fails its step.
func TestXDSClients(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts Node.js and Python clients")
	}
	m := startClientMesh(t)
	for _, step := range []struct {
		name string
		run  func(t *testing.T, m *clientMesh)
	}{
		{"round robin", testRoundRobin},
		{"endpoints", testEndpointChanges},
		{"weights", testWeights},
		{"grpcroute matches", testGRPCRouteMatches},
		{"timeout", testTimeout},
		{"retries", testRetries},
		{"route removal", testRouteRemoval},
		{"broken file, fresh client", testBrokenFileFreshClient},
		{"user agents", testUserAgents},
	} {
		t.Run(step.name, func(t *testing.T) { step.run(t, m) })
	}
}

// testRoundRobin: calls spread evenly over echo's ready endpoints and
// never reach its not-ready one.
func testRoundRobin(t *testing.T, m *clientMesh) {
	echo0, echo1 := m.b.Addr(echoIP0), m.b.Addr(echoIP1)
	m.each(t, m.clients, func(t *testing.T, c *meshClient) {
		until(t, c, "reach both ready echo pods evenly", "echo", xdsclients.MethodEcho, 20, nil, func(res []xdsclients.Result) bool {
			n := backendCounts(res)
			return only(echo0, echo1)(res) && n[echo0] >= 8 && n[echo1] >= 8
		})
	})
}

// testEndpointChanges: a pod added is picked; once not ready, or
// removed, it is not.
func testEndpointChanges(t *testing.T, m *clientMesh) {
	echo0, echo1, added := m.b.Addr(echoIP0), m.b.Addr(echoIP1), m.b.Addr(addedIP)
	m.write(t, "added.yaml", meshPod("echo-3", "echo", addedIP, true))
	m.each(t, m.clients, func(t *testing.T, c *meshClient) {
		until(t, c, "reach the added pod", "echo", xdsclients.MethodEcho, 12, nil, func(res []xdsclients.Result) bool {
			return only(echo0, echo1, added)(res) && backendCounts(res)[added] >= 3
		})
	})
	m.write(t, "added.yaml", meshPod("echo-3", "echo", addedIP, false))
	m.each(t, m.clients, func(t *testing.T, c *meshClient) {
		until(t, c, "leave the not-ready pod", "echo", xdsclients.MethodEcho, 12, nil, only(echo0, echo1))
	})
	m.write(t, "added.yaml", meshPod("echo-3", "echo", addedIP, true))
	m.each(t, m.clients, func(t *testing.T, c *meshClient) {
		until(t, c, "reach the pod ready again", "echo", xdsclients.MethodEcho, 12, nil, func(res []xdsclients.Result) bool {
			return backendCounts(res)[added] >= 3
		})
	})
	m.remove(t, "added.yaml")
	m.each(t, m.clients, func(t *testing.T, c *meshClient) {
		until(t, c, "leave the removed pod", "echo", xdsclients.MethodEcho, 12, nil, only(echo0, echo1))
	})
}

// splitRoute is an HTTPRoute on front sending weights to echo and canary.
func splitRoute(echo, canary int) string {
	return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: split, namespace: ns}
spec:
  parentRefs: [{group: "", kind: Service, name: front, port: 7000}]
  rules:
  - backendRefs:
    - {name: echo, port: 7000, weight: %d}
    - {name: canary, port: 7000, weight: %d}
`, echo, canary)
}

// testWeights: a 1:3 split shows in the share of calls, and moving all
// the weight from one backend to the other moves every call.
func testWeights(t *testing.T, m *clientMesh) {
	echo0, echo1, canary := m.b.Addr(echoIP0), m.b.Addr(echoIP1), m.b.Addr(canaryIP)
	m.write(t, "split.yaml", splitRoute(100, 0))
	m.each(t, m.clients, func(t *testing.T, c *meshClient) {
		until(t, c, "send all to echo at 100/0", "front", xdsclients.MethodEcho, 10, nil, only(echo0, echo1))
	})
	m.write(t, "split.yaml", splitRoute(0, 100))
	m.each(t, m.clients, func(t *testing.T, c *meshClient) {
		until(t, c, "send all to canary at 0/100", "front", xdsclients.MethodEcho, 10, nil, only(canary))
	})
	m.write(t, "split.yaml", splitRoute(1, 3))
	m.each(t, m.clients, func(t *testing.T, c *meshClient) {
		// 200 calls at 3/4: a mean of 150 and a deviation of 6.1; the
		// bounds are over 4 deviations away.
		until(t, c, "split 1:3", "front", xdsclients.MethodEcho, 200, nil, func(res []xdsclients.Result) bool {
			n := backendCounts(res)
			return only(echo0, echo1, canary)(res) && n[canary] >= 125 && n[canary] <= 175
		})
	})
}

// matchRoute is a GRPCRoute on echo sending the meshtest.Other service,
// and calls with the header x-canary: yes, to canary.
const matchRoute = `apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: matches, namespace: ns}
spec:
  parentRefs: [{group: "", kind: Service, name: echo, port: 7000}]
  rules:
  - matches:
    - method: {service: meshtest.Other}
    - headers: [{name: x-canary, value: "yes"}]
    backendRefs: [{name: canary, port: 7000}]
`

func testGRPCRouteMatches(t *testing.T, m *clientMesh) {
	echo0, echo1, canary := m.b.Addr(echoIP0), m.b.Addr(echoIP1), m.b.Addr(canaryIP)
	m.write(t, "matches.yaml", matchRoute)
	m.each(t, m.clients, func(t *testing.T, c *meshClient) {
		until(t, c, "send the header match to canary", "echo", xdsclients.MethodEcho, 5, map[string]string{"x-canary": "yes"}, only(canary))
		// Once the route is in, the other matches hold at once.
		if res := calls(t, c, "echo", xdsclients.MethodEcho, 6, map[string]string{"x-canary": "no"}); !only(echo0, echo1)(res) {
			t.Errorf("x-canary: no went to %s, want echo", summary(res))
		}
		res, err := c.client.Call(t.Context(), xdsclients.Call{Target: target("echo"), Method: "/meshtest.Other/Echo", Count: 5})
		if err != nil {
			t.Fatal(err)
		}
		if !only(canary)(res) {
			t.Errorf("meshtest.Other went to %s, want canary", summary(res))
		}
	})
	m.remove(t, "matches.yaml")
	m.each(t, m.clients, func(t *testing.T, c *meshClient) {
		until(t, c, "send the header match back to echo", "echo", xdsclients.MethodEcho, 6, map[string]string{"x-canary": "yes"}, only(echo0, echo1))
	})
}

// policyRoute is an HTTPRoute on canary with one rule's extra fields
// (timeouts, retry).
func policyRoute(rule string) string {
	return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: policy, namespace: ns}
spec:
  parentRefs: [{group: "", kind: Service, name: canary, port: 7000}]
  rules:
  - backendRefs: [{name: canary, port: 7000}]
` + rule
}

// testTimeout: a route's request timeout ends a slow call with
// DEADLINE_EXCEEDED well before the backend answers (SlowDelay), which a
// call without the route waits for.
func testTimeout(t *testing.T, m *clientMesh) {
	m.write(t, "policy.yaml", policyRoute("    timeouts: {request: 300ms}\n"))
	m.each(t, m.clients, func(t *testing.T, c *meshClient) {
		start := time.Now()
		until(t, c, "time out the slow call", "canary", xdsclients.MethodSlow, 1, nil, func(res []xdsclients.Result) bool {
			start = time.Now()
			return res[0].Code == 4 // DEADLINE_EXCEEDED
		})
		if d := time.Since(start); d >= xdsclients.SlowDelay {
			t.Errorf("the timed-out call took %v, as long as the backend", d)
		}
	})
	m.remove(t, "policy.yaml")
	m.each(t, m.clients, func(t *testing.T, c *meshClient) {
		until(t, c, "let the slow call finish", "canary", xdsclients.MethodSlow, 1, nil, only(m.b.Addr(canaryIP)))
	})
}

// testRetries: with a retry policy, calls to a backend failing every
// other call all succeed; without it, about half fail.
func testRetries(t *testing.T, m *clientMesh) {
	canary := m.b.Addr(canaryIP)
	m.each(t, m.clients, func(t *testing.T, c *meshClient) {
		res := calls(t, c, "canary", xdsclients.MethodFlaky, 10, nil)
		if n := backendCounts(res)["code 14"]; n < 3 {
			t.Errorf("without retries, %d of 10 flaky calls failed, want about half: %s", n, summary(res))
		}
	})
	m.write(t, "policy.yaml", policyRoute("    retry: {codes: [503], attempts: 3, backoff: 10ms}\n"))
	m.each(t, m.clients, func(t *testing.T, c *meshClient) {
		until(t, c, "retry the flaky calls", "canary", xdsclients.MethodFlaky, 10, nil, only(canary))
	})
	m.remove(t, "policy.yaml")
	m.each(t, m.clients, func(t *testing.T, c *meshClient) {
		until(t, c, "stop retrying", "canary", xdsclients.MethodFlaky, 10, nil, func(res []xdsclients.Result) bool {
			return backendCounts(res)["code 14"] >= 3
		})
	})
}

// testRouteRemoval: with the split route gone, front's calls go to
// front's own pod.
func testRouteRemoval(t *testing.T, m *clientMesh) {
	m.write(t, "split.yaml", splitRoute(0, 100))
	m.each(t, m.clients, func(t *testing.T, c *meshClient) {
		until(t, c, "send all to canary", "front", xdsclients.MethodEcho, 5, nil, only(m.b.Addr(canaryIP)))
	})
	m.remove(t, "split.yaml")
	m.each(t, m.clients, func(t *testing.T, c *meshClient) {
		until(t, c, "fall back to front's pod", "front", xdsclients.MethodEcho, 5, nil, only(m.b.Addr(frontIP)))
	})
}

// testBrokenFileFreshClient: with the route's file broken, meshd keeps
// its last good objects, and a client that starts then gets them.
func testBrokenFileFreshClient(t *testing.T, m *clientMesh) {
	m.write(t, "split.yaml", splitRoute(0, 100))
	m.each(t, m.clients, func(t *testing.T, c *meshClient) {
		until(t, c, "send all to canary", "front", xdsclients.MethodEcho, 5, nil, only(m.b.Addr(canaryIP)))
	})
	m.write(t, "split.yaml", "kind: HTTPRoute\n  metadata: [broken\n")
	waitFor(t, "the broken file in /debug/api/problems", func() (string, bool) {
		_, body := m.r.get(t, "/debug/api/problems")
		return body, strings.Contains(body, "split.yaml")
	})
	var fresh []*meshClient
	for _, c := range m.clients {
		fresh = append(fresh, m.startClient(t, c.impl, "fresh"))
	}
	m.each(t, fresh, func(t *testing.T, c *meshClient) {
		until(t, c, "get the last good route", "front", xdsclients.MethodEcho, 5, nil, only(m.b.Addr(canaryIP)))
	})
	m.remove(t, "split.yaml")
}

// testUserAgents: the proxies API shows each client's user agent, and
// the variant of the resources it is sent: the older C-core the legacy
// one, the others gRPC clients'.
func testUserAgents(t *testing.T, m *clientMesh) {
	want := map[string]string{"c-core": collections.VariantGRPCLegacy, "grpc-go": collections.VariantGRPC, "grpc-js": collections.VariantGRPC}
	m.each(t, m.clients, func(t *testing.T, c *meshClient) {
		p := m.proxyEntry(t, c.node)
		if p.Metadata["userAgent"] == "" {
			t.Errorf("%s shows no user agent: %+v", c.node, p.Metadata)
		}
		if p.Variant != want[c.impl.Name] {
			t.Errorf("%s (%s) is sent variant %q, want %q", c.node, p.Metadata["userAgent"], p.Variant, want[c.impl.Name])
		}
		t.Logf("%s (%s): user agent %q, variant %q", c.impl.Name, c.impl.Version(), p.Metadata["userAgent"], p.Variant)
	})
}
