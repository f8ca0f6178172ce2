package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestRouteProblemsCollector(t *testing.T) {
	const header = "# HELP meshd_route_problems Route parents with a false condition now: Accepted (the route is not in effect for that parent) or ResolvedRefs (requests for an unresolved backend fail).\n" +
		"# TYPE meshd_route_problems gauge\n"
	tests := []struct {
		name     string
		problems []RouteProblem
		want     string
	}{
		{"none: no series", nil, ""},
		{"counted by kind, condition and reason", []RouteProblem{
			{Kind: "HTTPRoute", Condition: "ResolvedRefs", Reason: "BackendNotFound"},
			{Kind: "HTTPRoute", Condition: "ResolvedRefs", Reason: "BackendNotFound"},
			{Kind: "GRPCRoute", Condition: "Accepted", Reason: "NoMatchingParent"},
		}, header + `meshd_route_problems{condition="Accepted",kind="GRPCRoute",reason="NoMatchingParent"} 1
meshd_route_problems{condition="ResolvedRefs",kind="HTTPRoute",reason="BackendNotFound"} 2
`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewRouteProblemsCollector(func() []RouteProblem { return tc.problems })
			if err := testutil.CollectAndCompare(c, strings.NewReader(tc.want), "meshd_route_problems"); err != nil {
				t.Error(err)
			}
		})
	}
}
