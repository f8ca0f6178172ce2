package app

import (
	"slices"
	"strings"

	"github.com/meshd/meshd/cmd/meshd/internal/problem"
	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/krt"
)

// reportPolicies makes the fields of security policies that meshd does
// not support visible: a problem in the debug UI for each policy, and a
// warning logged whenever a policy's problems change.
func (a *App) reportPolicies() {
	m := a.model.Mesh
	a.problems = append(a.problems, func() []problem.Problem {
		var out []problem.Problem
		for _, p := range m.PeerAuthentications.List() {
			out = append(out, policyProblems("PeerAuthentication", p.ResourceName(), p.Problems)...)
		}
		for _, p := range m.AuthorizationPolicies.List() {
			out = append(out, policyProblems("AuthorizationPolicy", p.ResourceName(), p.Problems)...)
		}
		return out
	})
	logChanged(a, "PeerAuthentication", m.PeerAuthentications, func(p collections.PeerAuthn) []string { return p.Problems })
	logChanged(a, "AuthorizationPolicy", m.AuthorizationPolicies, func(p collections.AuthzPolicy) []string { return p.Problems })
}

func policyProblems(kind, key string, problems []string) []problem.Problem {
	if len(problems) == 0 {
		return nil
	}
	return []problem.Problem{{
		Source: "policy", Object: kind + " " + key,
		Error: "applied fail-closed: " + strings.Join(problems, "; "), Severity: problem.SeverityWarning,
	}}
}

// logChanged logs a policy's problems when they first appear or change.
func logChanged[T any](a *App, kind string, c krt.Collection[T], problems func(T) []string) {
	log := a.log.With("component", "policies")
	c.Register(func(b krt.Batch[T]) {
		for _, e := range b.Events {
			if e.New == nil {
				continue
			}
			now := problems(*e.New)
			if len(now) == 0 || (e.Old != nil && slices.Equal(problems(*e.Old), now)) {
				continue
			}
			log.Warn("policy has fields meshd does not support; applied fail-closed",
				"kind", kind, "policy", e.Key, "problems", now)
		}
	}, krt.WithReplay())
}
