package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshd/meshd/cmd/meshd/internal/debugui"
)

// typoRoute splits reviews between reviews-v1 and a misspelled version.
const typoRoute = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: typo
  namespace: shop
spec:
  parentRefs:
  - {group: "", kind: Service, name: reviews, port: 9080}
  rules:
  - backendRefs:
    - {name: reviews-v1, port: 9080, weight: 50}
    - {name: reviews-v3, port: 9080, weight: 50}
`

// TestFaultRouteUnresolvedBackend adds a route with a misspelled backend
// and checks that an operator sees it: one warning in the log, however
// often the route is recomputed; a row in Problems naming the route, the
// parent and the reason; the RouteStatus node's count; and the gauge
// meshd_route_problems. Fixed, the problem goes away.
func TestFaultRouteUnresolvedBackend(t *testing.T) {
	r, dir := startDir(t, nil, nil)
	path := filepath.Join(dir, "typo.yaml")
	writeFile(t, path, typoRoute)
	const logged = "route is rejected or has unresolved backends"
	r.waitLog(t, "the route's problem", "level=WARN", logged, "HTTPRoute/shop/typo", "BackendNotFound")

	var probs debugui.ProblemsResult
	waitFor(t, "the route in /debug/api/problems", func() (string, bool) {
		r.getJSON(t, "/debug/api/problems", &probs)
		for _, p := range probs.Problems {
			if p.Object == "HTTPRoute shop/typo" && p.Collection == "RouteStatus" &&
				strings.Contains(p.Error, "parent shop/reviews:9080: BackendNotFound: service shop/reviews-v3 not found") {
				return "", true
			}
		}
		return "", false
	})
	r.waitMetric(t, `meshd_route_problems{condition="ResolvedRefs",kind="HTTPRoute",reason="BackendNotFound"}`,
		func(v float64) bool { return v == 1 })
	var graph debugui.GraphSummary
	r.getJSON(t, "/debug/api/graph", &graph)
	for _, c := range graph.Collections {
		if c.Name == "RouteStatus" && c.Problems != 1 {
			t.Errorf("the RouteStatus node counts %d problems, want 1", c.Problems)
		}
	}

	// The parent service gains a port: the route is recomputed, its status
	// is the same, and nothing more is logged.
	const recomputes = `meshd_krt_collection_recomputes_total{collection="HTTPRouteResults",kind="collection"}`
	before := r.waitMetric(t, recomputes, func(float64) bool { return true })
	services := filepath.Join(dir, "services.yaml")
	manifest, err := os.ReadFile(services)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, services, strings.Replace(string(manifest), "    appProtocol: grpc\n", "    appProtocol: grpc\n  - {name: http-extra, port: 9999}\n", 1))
	r.waitMetric(t, recomputes, func(v float64) bool { return v > before })
	if n := strings.Count(r.log.String(), logged); n != 1 {
		t.Errorf("the route's problem is logged %d times, want once:\n%s", n, r.log.String())
	}

	writeFile(t, path, strings.Replace(typoRoute, "reviews-v3", "reviews-v2", 1))
	r.waitLog(t, "the fix", "route problems resolved", "HTTPRoute/shop/typo")
	r.waitMetric(t, `meshd_source_problems{severity="error"}`, func(v float64) bool { return v == 0 })
}
