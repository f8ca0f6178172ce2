package app

import (
	"fmt"
	"testing"

	"github.com/meshd/meshd/cmd/meshd/internal/problem"
	"github.com/meshd/meshd/sources/folder"
)

func TestFromFolderProblemsOneRowPerUnknownKind(t *testing.T) {
	sa := func(file string, n int) folder.Problem {
		return folder.Problem{Path: file, Doc: n, Line: 3 * n, Severity: folder.SeverityWarning,
			Object: fmt.Sprintf("ServiceAccount shop/sa-%d", n), UnknownKind: "ServiceAccount (v1)",
			Message: "kind ServiceAccount (v1) has no collection; kept as unstructured"}
	}
	in := []folder.Problem{
		sa("a.yaml", 1), sa("a.yaml", 2),
		{Path: "b.yaml", Line: 7, Doc: 1, Severity: folder.SeverityError, Message: "invalid YAML: mapping values"},
		sa("c.yaml", 3),
		{Path: "d.yaml", Line: 1, Doc: 1, Severity: folder.SeverityWarning, Object: "Deployment shop/web",
			UnknownKind: "Deployment (apps/v1)", Message: "kind Deployment (apps/v1) has no collection"},
	}
	got := fromFolderProblems(in)
	want := []problem.Problem{
		{Source: "a.yaml:3", Object: "ServiceAccount shop/sa-1 and 2 more", Severity: problem.SeverityWarning,
			Error: "warning: document 1: kind ServiceAccount (v1) has no collection; kept as unstructured"},
		{Source: "b.yaml:7", Severity: problem.SeverityError, Error: "document 1: invalid YAML: mapping values"},
		{Source: "d.yaml:1", Object: "Deployment shop/web", Severity: problem.SeverityWarning,
			Error: "warning: document 1: kind Deployment (apps/v1) has no collection"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got\n%v\nwant\n%v", got, want)
	}
}
