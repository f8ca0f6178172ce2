package multicluster

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
	"github.com/meshd/meshd/sources/kube"
)

// unread are the kinds a remote cluster does not contribute: routes,
// policies and mesh config come from the local cluster (the config
// cluster), and namespaces are the same by name.
var unread = []string{"namespaces", "configmaps", "httproutes", "grpcroutes", "peerauthentications", "authorizationpolicies"}

// member is one generation of a remote cluster: a kube source built from
// one kubeconfig, in a sub-graph of its own. A rotated kubeconfig makes a
// new member, which replaces the old once it has synced.
type member struct {
	cluster Cluster
	gen     int
	health  *Health
	started time.Time
	// err is set when the member could not be built (a bad kubeconfig);
	// nothing runs then.
	err error

	sub    *krt.SubGraph
	inputs sources.Inputs
	cancel context.CancelFunc
	done   chan struct{} // closed once the source's Run has returned
}

// startMember builds and starts m, a generation of its cluster, whose
// cluster, gen, health and started are set; it sets m.err if it cannot.
// Its goroutines are counted in wg; poke is called once it has synced.
func startMember(ctx context.Context, wg *sync.WaitGroup, g *krt.Graph, log *slog.Logger, m *member, poke func()) {
	c, gen := m.cluster, m.gen
	rc, err := clientcmd.RESTConfigFromKubeConfig(c.Kubeconfig)
	if err != nil {
		m.err = fmt.Errorf("cluster %q: kubeconfig: %w", c.Name, err)
		return
	}
	rc.Wrap(m.health.Wrap)
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		m.err = fmt.Errorf("cluster %q: client: %w", c.Name, err)
		return
	}
	name := "remote/" + c.Name
	m.sub = g.NewSubGraph(fmt.Sprintf("%s#%d", name, gen))
	opts := []kube.Option{kube.WithCluster(c.Name), kube.WithName(name),
		kube.WithLogger(log.With("cluster", c.Name, "generation", gen))}
	for _, r := range unread {
		opts = append(opts, kube.WithoutWatch(r))
	}
	src := kube.New(m.sub, kube.Clients{Kube: client}, opts...)
	m.inputs = src.Inputs()
	ctx, m.cancel = context.WithCancel(ctx)
	m.done = make(chan struct{})
	wg.Go(func() {
		defer close(m.done)
		_ = src.Run(ctx) // returns nil once its informers have stopped
	})
	wg.Go(func() {
		if m.inputs.WaitSynced(ctx) == nil {
			poke()
		}
	})
}

// buildErr is why m could not be built; nil for a nil m.
func (m *member) buildErr() error {
	if m == nil {
		return nil
	}
	return m.err
}

// synced reports whether the member's collections hold their initial
// listing.
func (m *member) synced() bool { return m.err == nil && m.inputs.HasSynced() }

// stop ends the member's source and then removes its sub-graph, in a
// goroutine counted in wg: the source must have stopped writing before
// its collections go. The caller has taken them out of the joins.
func (m *member) stop(wg *sync.WaitGroup) {
	if m.err != nil {
		return
	}
	m.cancel()
	wg.Go(func() {
		<-m.done
		m.sub.Stop()
	})
}
