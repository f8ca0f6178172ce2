package app

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/meshd/meshd/cmd/meshd/internal/metrics"
	"github.com/meshd/meshd/cmd/meshd/internal/problem"
	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/krt"
)

// routeStatusCollection is the graph node that route problems point at.
const routeStatusCollection = "RouteStatus"

// reportRoutes makes routes that are rejected or partly invalid visible:
// a problem in the debug UI for each route parent with a false condition
// (its node in the graph counts them), a warning logged when a route's
// problems appear or change, and the gauge meshd_route_problems.
func (a *App) reportRoutes() {
	status := a.model.Mesh.RouteStatus
	a.problems = append(a.problems, func() []problem.Problem {
		var out []problem.Problem
		for _, st := range status.List() {
			out = append(out, routeProblems(st)...)
		}
		return out
	})
	a.metrics = append(a.metrics, metrics.NewRouteProblemsCollector(func() []metrics.RouteProblem {
		var out []metrics.RouteProblem
		for _, st := range status.List() {
			for _, p := range st.Parents {
				for _, c := range falseConditions(p) {
					out = append(out, metrics.RouteProblem{Kind: st.Kind, Condition: c.Type, Reason: c.Reason})
				}
			}
		}
		return out
	}))
	log := a.log.With("component", "routes")
	status.Register(func(b krt.Batch[collections.RouteStatus]) {
		for _, e := range b.Events {
			logRouteChange(log, e)
		}
	}, krt.WithReplay())
}

// routeProblems returns a problem for each false condition of each parent
// of st: rejected parents (Accepted) are errors, since the route is not in
// effect for them; unresolved backends (ResolvedRefs) too, since their
// share of the traffic fails.
func routeProblems(st collections.RouteStatus) []problem.Problem {
	var out []problem.Problem
	for _, p := range st.Parents {
		for _, c := range falseConditions(p) {
			out = append(out, problem.Problem{
				Source:     "route",
				Object:     st.Kind + " " + st.Namespace + "/" + st.Name,
				Error:      fmt.Sprintf("parent %s: %s: %s%s", parentName(p), c.Reason, c.Message, consequence(c)),
				Severity:   problem.SeverityError,
				Collection: routeStatusCollection,
			})
		}
	}
	return out
}

// consequence says what a false condition does to traffic.
func consequence(c collections.Condition) string {
	if c.Type == collections.ConditionResolvedRefs {
		return "; requests meant for it fail (HTTP 500, gRPC UNAVAILABLE)"
	}
	return "; the route is not in effect for this parent"
}

// parentName names a parent service port: "ns/web" or "ns/web:80".
func parentName(p collections.ParentStatus) string {
	if p.Port == 0 {
		return p.Service
	}
	return fmt.Sprintf("%s:%d", p.Service, p.Port)
}

func falseConditions(p collections.ParentStatus) []collections.Condition {
	var out []collections.Condition
	for _, c := range p.Conditions {
		if !c.Status {
			out = append(out, c)
		}
	}
	return out
}

// routeProblemTexts are a route's problems as log values.
func routeProblemTexts(st *collections.RouteStatus) []string {
	if st == nil {
		return nil
	}
	var out []string
	for _, p := range routeProblems(*st) {
		out = append(out, p.Error)
	}
	return out
}

// logRouteChange logs a route's problems when they appear or change, and
// once when they are gone: once per change, however often the route is
// recomputed.
func logRouteChange(log *slog.Logger, e krt.Event[collections.RouteStatus]) {
	before, now := routeProblemTexts(e.Old), routeProblemTexts(e.New)
	switch {
	case slices.Equal(before, now):
	case e.New == nil:
		log.Info("route with problems deleted", "route", e.Key)
	case len(now) == 0:
		log.Info("route problems resolved", "route", e.Key)
	default:
		log.Warn("route is rejected or has unresolved backends", "route", e.Key, "problems", now)
	}
}
