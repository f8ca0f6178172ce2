package app

import (
	"context"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshd/meshd/cmd/meshd/internal/policystatus"
	"github.com/meshd/meshd/cmd/meshd/internal/problem"
	"github.com/meshd/meshd/cmd/meshd/internal/routestatus"
	"github.com/meshd/meshd/cmd/meshd/internal/statuswriter"
)

// buildStatus sets up the status writers when a cluster is watched, for
// routes and for security policies: with --leader-elect they run for each
// term this replica leads, else always, as the only replica's.
func (a *App) buildStatus() {
	c := a.cluster
	if c == nil || !a.cfg.WriteStatus {
		if a.cfg.LeaderElect {
			a.log.Info("no leader election: with --write-status=false a leader would have nothing to do")
		}
		return
	}
	opts := func(component string) statuswriter.Options {
		return statuswriter.Options{QPS: a.cfg.StatusQPS, Burst: a.cfg.StatusBurst, Logger: a.log.With("component", component)}
	}
	ro := opts("route-status")
	routes := routestatus.New(c.clients.Gateway, a.model.Mesh.RouteStatus,
		routestatus.Routes{HTTP: c.inputs.HTTPRoutes, GRPC: c.inputs.GRPCRoutes},
		routestatus.Options{ControllerName: a.cfg.ControllerName, QPS: ro.QPS, Burst: ro.Burst, Logger: ro.Logger})
	writers := []*statuswriter.Writer{routes.Writer}
	a.metrics = append(a.metrics, statusMetrics("route", routes.Writer)...)
	a.problems = append(a.problems, statusProblems("route status", routes.Writer))
	if c.clients.Istio != nil {
		policies := policystatus.New(c.clients.Istio, a.model.Mesh, policystatus.Policies{
			PeerAuthentications: c.inputs.PeerAuthentications, AuthorizationPolicies: c.inputs.AuthorizationPolicies}, opts("policy-status"))
		writers = append(writers, policies)
		a.metrics = append(a.metrics, statusMetrics("policy", policies)...)
		a.problems = append(a.problems, statusProblems("policy status", policies))
	}
	runAll := func(ctx context.Context) {
		var wg sync.WaitGroup
		for _, w := range writers {
			wg.Go(func() { w.Run(ctx) })
		}
		wg.Wait()
	}
	if !a.cfg.LeaderElect {
		a.components = append(a.components, component{"status", func(ctx context.Context) error {
			runAll(ctx)
			return nil
		}})
		return
	}
	a.leader = newLeadership(a.cfg, c.clients.Kube, a.log.With("component", "leader-election"))
	a.metrics = append(a.metrics, leaderMetrics(a.leader)...)
	a.components = append(a.components, component{"leader election", func(ctx context.Context) error {
		return a.leader.run(ctx, runAll)
	}})
}

// statusProblems shows the objects whose status could not be written (the
// API server refuses, or RBAC forbids) in the debug UI's Problems tab.
func statusProblems(source string, w *statuswriter.Writer) func() []problem.Problem {
	return func() []problem.Problem {
		var out []problem.Problem
		for _, f := range w.Failing() {
			kind, name, _ := strings.Cut(f.Key, "/")
			out = append(out, problem.Problem{
				Source: source,
				Object: kind + " " + name,
				Error:  "status not written (retried with backoff): " + f.Error,
				Since:  f.Since,
			})
		}
		return out
	}
}

// statusMetrics exports a writer's counters as
// meshd_<what>_status_writes_total.
func statusMetrics(what string, w *statuswriter.Writer) []prometheus.Collector {
	counter := func(result string, get func(statuswriter.Stats) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "meshd_" + what + "_status_writes_total",
			Help:        "Status reconciliations of " + what + "s by result: written (an update through the status subresource), unchanged (no write needed), conflict (retried), not_found (gone or not in the cluster), error.",
			ConstLabels: prometheus.Labels{"result": result},
		}, func() float64 { return float64(get(w.Stats())) })
	}
	return []prometheus.Collector{
		counter("written", func(s statuswriter.Stats) uint64 { return s.Written }),
		counter("unchanged", func(s statuswriter.Stats) uint64 { return s.Unchanged }),
		counter("conflict", func(s statuswriter.Stats) uint64 { return s.Conflicts }),
		counter("not_found", func(s statuswriter.Stats) uint64 { return s.NotFound }),
		counter("error", func(s statuswriter.Stats) uint64 { return s.Errors }),
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
