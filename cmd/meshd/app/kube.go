package app

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshd/meshd/cmd/meshd/internal/problem"
	"github.com/meshd/meshd/sources"
	"github.com/meshd/meshd/sources/kube"
)

// buildKube creates the Kubernetes source for --kubeconfig or
// --in-cluster. Only the configuration is read here: the cluster is first
// contacted by Run, and until its informers have listed, /readyz says it
// waits for "source kubernetes".
func (a *App) buildKube() (sources.Inputs, error) {
	var rc *rest.Config
	var err error
	flag := "--kubeconfig " + a.cfg.Kubeconfig
	if a.cfg.InCluster {
		flag = "--in-cluster"
		rc, err = rest.InClusterConfig()
	} else {
		rc, err = clientcmd.BuildConfigFromFlags("", a.cfg.Kubeconfig)
	}
	if err != nil {
		return sources.Inputs{}, fmt.Errorf("%s: %w", flag, err)
	}
	if rc.QPS == 0 {
		// client-go's default (5 per second) would cap status writes
		// below --status-qps; the writer's own bucket is the limit.
		rc.QPS, rc.Burst = float32(max(2*a.cfg.StatusQPS, 20)), max(2*a.cfg.StatusBurst, 40)
	}
	clients, err := kube.ClientsForConfig(rc)
	if err != nil {
		return sources.Inputs{}, fmt.Errorf("%s: %w", flag, err)
	}
	opts := append(KubeOptions(a.cfg), kube.WithLogger(a.log.With("source", "kubernetes")))
	src := kube.New(a.model.Graph, clients, opts...)
	in := src.Inputs()
	a.cluster = &cluster{clients: clients, inputs: in}
	a.ready.add("source kubernetes ("+rc.Host+")", in.Synced()...)
	a.components = append(a.components, component{"kubernetes source", src.Run})
	a.problems = append(a.problems, kubeProblems(src))
	return in, nil
}

// cluster is the watched cluster: its clients, for the writes the leader
// makes, and its own inputs, since status is written only for the routes
// the cluster holds (not for a folder's).
type cluster struct {
	clients kube.Clients
	inputs  sources.Inputs
}

// kubeProblems reports the collections whose informers have not listed yet
// although their watches failed: the cluster is unreachable or refuses.
func kubeProblems(src *kube.Source) func() []problem.Problem {
	return func() []problem.Problem {
		var out []problem.Problem
		for _, st := range src.Stats() {
			if !st.Synced && st.WatchErrors > 0 {
				out = append(out, problem.Problem{
					Source: "kubernetes",
					Object: st.Resource,
					Error:  fmt.Sprintf("not listed yet after %d failed lists or watches (see the log for why)", st.WatchErrors),
				})
			}
		}
		return out
	}
}
