package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/meshd/meshd/cmd/meshd/internal/problem"
)

type problemList []problem.Problem

func (l problemList) Problems() []problem.Problem { return l }

func TestProblemsCollector(t *testing.T) {
	tests := []struct {
		name     string
		problems problemList
		want     string
	}{
		{"none: both series at zero", nil, `
meshd_source_problems{severity="error"} 0
meshd_source_problems{severity="warning"} 0
`},
		{"an unset severity is an error", problemList{
			{Source: "a.yaml:3", Error: "invalid YAML"},
			{Source: "b.yaml", Error: "no name", Severity: problem.SeverityError},
			{Source: "c.yaml", Error: "kind Secret has no collection", Severity: problem.SeverityWarning},
		}, `
meshd_source_problems{severity="error"} 2
meshd_source_problems{severity="warning"} 1
`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := "# HELP meshd_source_problems Problems the sources and routes report now; severity error: configuration is not served as written (a source keeps its last good objects, a route is rejected or fails part of its traffic).\n" +
				"# TYPE meshd_source_problems gauge" + tc.want
			if err := testutil.CollectAndCompare(NewProblemsCollector(tc.problems), strings.NewReader(want)); err != nil {
				t.Error(err)
			}
		})
	}
}
