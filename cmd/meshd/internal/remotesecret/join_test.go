package remotesecret

import (
	"context"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources/multicluster"
)

// TestReaderSecretJoins joins a remote cluster through the Secret Create
// prints, on an API server that holds the reader to its ClusterRole: the
// cluster syncs with no request refused, so a remote cluster's source
// reads no more than meshd-remote-reader grants. (It has no Gateway API
// or Istio client, so it reads no routes or policies, and meshd writes
// no route status there: each cluster's own meshd does.)
func TestReaderSecretJoins(t *testing.T) {
	env := remote.Env(t)
	admin, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Create(t.Context(), Remote{Client: admin, Server: env.Config.Host, Insecure: true}, Options{Cluster: "south"})
	if err != nil {
		t.Fatal(err)
	}
	clusters, err := multicluster.ClustersOfSecret(s)
	if err != nil {
		t.Fatal(err)
	}
	g := krt.NewGraph()
	r := multicluster.New(g, multicluster.WithCheckInterval(50*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = g.Run(ctx) })
	wg.Go(func() { _ = r.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	r.Apply("secret "+s.Namespace+"/"+s.Name, clusters, nil)

	deadline := time.Now().Add(30 * time.Second)
	var st multicluster.ClusterStatus
	for {
		if all := r.Status(); len(all) == 1 {
			st = all[0]
		}
		if st.State == multicluster.StateSynced && !st.LastWatch.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster not synced within 30s: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st.Errors != 0 || st.LastError != "" {
		t.Errorf("the reader's requests failed %d times (last: %s); want none refused", st.Errors, st.LastError)
	}
}
