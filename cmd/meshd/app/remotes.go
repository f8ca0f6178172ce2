package app

import (
	"context"
	"fmt"
	"time"

	"github.com/meshd/meshd/cmd/meshd/internal/metrics"
	"github.com/meshd/meshd/cmd/meshd/internal/problem"
	"github.com/meshd/meshd/sources"
	"github.com/meshd/meshd/sources/multicluster"
)

// buildRemotes creates the joins of the remote clusters, named by
// --remote-kubeconfig and, with --remote-secrets, by the local cluster's
// Secrets. The remotes add to the local cluster's inputs and never hold up
// /readyz: a cluster joins once it has listed.
func (a *App) buildRemotes() (sources.Inputs, error) {
	clusters, err := a.cfg.remoteClusters()
	if err != nil {
		return sources.Inputs{}, err
	}
	log := a.log.With("source", "multicluster")
	r := multicluster.New(a.model.Graph, multicluster.WithLogger(log), multicluster.WithClusterName(a.cfg.ClusterName),
		multicluster.WithSyncTimeout(a.cfg.RemoteSyncTimeout), multicluster.WithStaleTimeout(a.cfg.RemoteStaleTimeout),
		multicluster.WithStaleGrace(a.cfg.RemoteStaleGrace), multicluster.WithStaleFailures(a.cfg.RemoteStaleFailures))
	if len(clusters) > 0 {
		r.Apply("--remote-kubeconfig", clusters, nil)
	}
	a.remotes = r
	a.components = append(a.components, component{"remote clusters", r.Run})
	if a.cfg.RemoteSecrets {
		ns := a.cfg.RemoteSecretsNamespace
		if ns == "" {
			ns = ownNamespace(a.cfg.InCluster)
		}
		client := a.cluster.clients.Kube
		a.components = append(a.components, component{"remote cluster secrets", func(ctx context.Context) error {
			return multicluster.WatchSecrets(ctx, client, ns, r, log)
		}})
	}
	a.problems = append(a.problems, remoteProblems(r.Status))
	a.metrics = append(a.metrics, metrics.NewClustersCollector(r.Status))
	return r.Inputs().Complete(a.model.Graph, "remotes"), nil
}

// remoteProblems reports the remote clusters that are not serving as
// they should: unreachable, not listed in time, or misconfigured.
func remoteProblems(status func() []multicluster.ClusterStatus) func() []problem.Problem {
	return func() []problem.Problem {
		var out []problem.Problem
		for _, s := range status() {
			msg := remoteProblem(s)
			if msg == "" && s.Error != "" {
				msg = s.Error
			}
			if msg != "" {
				out = append(out, problem.Problem{Source: "cluster " + s.Name, Object: s.Origin, Error: msg})
			}
		}
		return out
	}
}

// remoteProblem says what is wrong with a cluster's state, if anything.
func remoteProblem(s multicluster.ClusterStatus) string {
	switch s.State {
	case multicluster.StateFailed:
		return s.Error
	case multicluster.StateStale:
		return fmt.Sprintf("unreachable since %s (%s); its last endpoints are served, flagged stale",
			s.FailingSince.Format(time.RFC3339), s.LastError)
	case multicluster.StateExpired:
		return fmt.Sprintf("unreachable since %s (%s); its endpoints were removed until it answers",
			s.FailingSince.Format(time.RFC3339), s.LastError)
	case multicluster.StateSyncing:
		if s.SyncTimedOut {
			return fmt.Sprintf("not listed within the sync timeout (last error: %s); it joins once listed", orNone(s.LastError))
		}
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
