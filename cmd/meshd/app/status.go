package app

import (
	"context"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshd/meshd/cmd/meshd/internal/problem"
	"github.com/meshd/meshd/cmd/meshd/internal/routestatus"
)

// buildStatus sets up the route status writer when a cluster is watched:
// with --leader-elect it runs for each term this replica leads, else
// always, as the only replica's.
func (a *App) buildStatus() {
	c := a.cluster
	if c == nil || !a.cfg.WriteStatus {
		if a.cfg.LeaderElect {
			a.log.Info("no leader election: with --write-status=false a leader would have nothing to do")
		}
		return
	}
	w := routestatus.New(c.clients.Gateway, a.model.Mesh.RouteStatus,
		routestatus.Routes{HTTP: c.inputs.HTTPRoutes, GRPC: c.inputs.GRPCRoutes},
		routestatus.Options{
			ControllerName: a.cfg.ControllerName,
			QPS:            a.cfg.StatusQPS,
			Burst:          a.cfg.StatusBurst,
			Logger:         a.log.With("component", "route-status"),
		})
	a.metrics = append(a.metrics, statusMetrics(w)...)
	a.problems = append(a.problems, statusProblems(w))
	if !a.cfg.LeaderElect {
		a.components = append(a.components, component{"route status", func(ctx context.Context) error {
			w.Run(ctx)
			return nil
		}})
		return
	}
	a.leader = newLeadership(a.cfg, c.clients.Kube, a.log.With("component", "leader-election"))
	a.metrics = append(a.metrics, leaderMetrics(a.leader)...)
	a.components = append(a.components, component{"leader election", func(ctx context.Context) error {
		return a.leader.run(ctx, w.Run)
	}})
}

// statusProblems shows the routes whose status could not be written (the
// API server refuses, or RBAC forbids) in the debug UI's Problems tab.
func statusProblems(w *routestatus.Writer) func() []problem.Problem {
	return func() []problem.Problem {
		var out []problem.Problem
		for _, f := range w.Failing() {
			kind, name, _ := strings.Cut(f.Key, "/")
			out = append(out, problem.Problem{
				Source: "route status",
				Object: kind + " " + name,
				Error:  "status not written (retried with backoff): " + f.Error,
				Since:  f.Since,
			})
		}
		return out
	}
}

// statusMetrics exports the writer's counters.
func statusMetrics(w *routestatus.Writer) []prometheus.Collector {
	counter := func(result string, get func(routestatus.Stats) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "meshd_route_status_writes_total",
			Help:        "Route status reconciliations by result: written (an update through the status subresource), unchanged (no write needed), conflict (retried), not_found (route gone or not in the cluster), error.",
			ConstLabels: prometheus.Labels{"result": result},
		}, func() float64 { return float64(get(w.Stats())) })
	}
	return []prometheus.Collector{
		counter("written", func(s routestatus.Stats) uint64 { return s.Written }),
		counter("unchanged", func(s routestatus.Stats) uint64 { return s.Unchanged }),
		counter("conflict", func(s routestatus.Stats) uint64 { return s.Conflicts }),
		counter("not_found", func(s routestatus.Stats) uint64 { return s.NotFound }),
		counter("error", func(s routestatus.Stats) uint64 { return s.Errors }),
	}
}

// leaderMetrics exports whether this replica leads, and its terms.
func leaderMetrics(l *leadership) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "meshd_leader",
			Help: "1 while this replica holds the leader election Lease (and writes status), else 0.",
		}, func() float64 {
			if l.leading.Load() {
				return 1
			}
			return 0
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "meshd_leader_terms_total",
			Help: "Terms this replica has won the leader election Lease.",
		}, func() float64 { return float64(l.terms.Load()) }),
	}
}
