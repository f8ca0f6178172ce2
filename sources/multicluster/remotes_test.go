package multicluster

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/krt/krttest"
	"github.com/meshd/meshd/sources"
	"github.com/meshd/meshd/sources/kube/kubetest"
)

// rig runs Remotes over a graph of its own until the test ends.
type rig struct {
	g   *krt.Graph
	r   *Remotes
	in  sources.Inputs
	log *eventLog[*sources.PodInfo]
}

func newRig(t *testing.T, opts ...Option) *rig {
	t.Helper()
	g := krt.NewGraph()
	r := New(g, append([]Option{WithCheckInterval(50 * time.Millisecond)}, opts...)...)
	rg := &rig{g: g, r: r, in: r.Inputs(), log: &eventLog[*sources.PodInfo]{}}
	rg.in.Pods.Register(rg.log.record)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = g.Run(ctx) })
	wg.Go(func() { _ = r.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return rg
}

// eventLog counts the adds and deletes a handler got.
type eventLog[T any] struct {
	mu            sync.Mutex
	adds, deletes int
	deletedKeys   []string
}

func (l *eventLog[T]) record(b krt.Batch[T]) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range b.Events {
		switch e.Type {
		case krt.EventAdd:
			l.adds++
		case krt.EventDelete:
			l.deletes++
			l.deletedKeys = append(l.deletedKeys, e.Key)
		}
	}
}

func (l *eventLog[T]) counts() (adds, deletes int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.adds, l.deletes
}

// waitFor polls cond until it holds, failing t after 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// seed creates namespace ns with a Service and n Pods in env.
func seed(t *testing.T, env *kubetest.Env, ns string, n int) kubernetes.Interface {
	t.Helper()
	ctx := context.Background()
	c, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Name: "grpc", Port: 80}}}}
	if _, err := c.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Namespace: ns, Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app"}}}}
		if _, err := c.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func kubeconfigOf(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (rg *rig) state(name string) ClusterStatus {
	for _, s := range rg.r.Status() {
		if s.Name == name {
			return s
		}
	}
	return ClusterStatus{}
}

// TestRemoteJoinsRotatesAndLeaves adds a remote cluster, rotates its
// kubeconfig and removes it, on a real API server: its pods join under
// cluster keys, a rotation changes no item, and removal takes them and
// the cluster's collections out of the graph.
func TestRemoteJoinsRotatesAndLeaves(t *testing.T) {
	env := west.Env(t)
	seed(t, env, "mc-lifecycle", 3)
	rg := newRig(t)
	before := len(rg.g.Describe().Collections)

	rg.r.Apply("secret meshd/west", []Cluster{{Name: "west", Kubeconfig: kubeconfigOf(t, env.Kubeconfig)}}, nil)
	waitFor(t, "the remote's pods", func() bool { return countNS(rg.in.Pods.List(), "mc-lifecycle") == 3 })
	if _, ok := rg.in.Pods.Get("west/mc-lifecycle/web-0"); !ok {
		t.Fatalf("no pod under key west/mc-lifecycle/web-0; keys: %v", krttest.Keys(rg.in.Pods))
	}
	p, _ := rg.in.Pods.Get("west/mc-lifecycle/web-0")
	if got := sources.ClusterOf(p); got != "west" {
		t.Errorf("pod's cluster annotation = %q, want west", got)
	}
	if _, ok := rg.in.Services.Get("mc-lifecycle/web"); !ok {
		t.Errorf("service not joined under namespace/name")
	}
	if st := rg.state("west"); st.State != StateSynced || st.LastList.IsZero() || st.LastWatch.IsZero() {
		t.Errorf("status = %+v, want synced with a list and a watch", st)
	}
	// The shared API server may hold other tests' objects too.
	if o := rg.state("west").Objects; o.Pods < 3 || o.Services < 1 || o.Pods != rg.in.Pods.Len() {
		t.Errorf("object counts = %+v, want the %d pods and the service joined", o, rg.in.Pods.Len())
	}
	// The handler runs on its own queue: wait until it has seen every
	// joined pod (other tests' too) before counting what rotation adds.
	waitFor(t, "the handler to see the joined pods", func() bool { a, _ := rg.log.counts(); return a >= rg.in.Pods.Len() })
	adds, deletes := rg.log.counts()

	rotated, err := env.KubeconfigAs(t.TempDir(), "rotated-user")
	if err != nil {
		t.Fatal(err)
	}
	rg.r.Apply("secret meshd/west", []Cluster{{Name: "west", Kubeconfig: kubeconfigOf(t, rotated)}}, nil)
	waitFor(t, "the rotated generation", func() bool {
		st := rg.state("west")
		return st.Generation == 2 && !st.Rotating && st.State == StateSynced
	})
	waitFor(t, "the first generation's collections to go", func() bool {
		return len(rg.g.Describe().Collections) == before+collectionsPerCluster(rg)
	})
	if a, d := rg.log.counts(); a != adds || d != deletes || countNS(rg.in.Pods.List(), "mc-lifecycle") != 3 {
		t.Errorf("rotation: %d adds and %d deletes (want none), %d pods (want 3)", a-adds, d-deletes, countNS(rg.in.Pods.List(), "mc-lifecycle"))
	}

	rg.r.Apply("secret meshd/west", nil, nil)
	waitFor(t, "the remote's pods to leave", func() bool { return rg.in.Pods.Len() == 0 && rg.in.Services.Len() == 0 })
	waitFor(t, "the cluster's collections to leave the graph", func() bool {
		return len(rg.g.Describe().Collections) == before
	})
	if len(rg.r.Status()) != 0 {
		t.Errorf("status after removal = %+v, want none", rg.r.Status())
	}
}

// collectionsPerCluster counts the collections one joined cluster adds.
func collectionsPerCluster(rg *rig) int {
	n := 0
	for _, c := range rg.g.Describe().Collections {
		if len(c.Name) > len("remote/") && c.Name[:len("remote/")] == "remote/" {
			n++
		}
	}
	return n
}

func countNS(pods []*sources.PodInfo, ns string) int {
	n := 0
	for _, p := range pods {
		if p.Namespace == ns {
			n++
		}
	}
	return n
}

// TestRemoteNamedAsLocalIsRefused names a remote cluster as the local
// one: it is not watched and its status says why.
func TestRemoteNamedAsLocalIsRefused(t *testing.T) {
	rg := newRig(t, WithClusterName("home"))
	before := len(rg.g.Describe().Collections)
	rg.r.Apply("secret meshd/home", []Cluster{{Name: "home", Kubeconfig: []byte("apiVersion: v1\nkind: Config\n")}}, nil)
	waitFor(t, "the cluster's status", func() bool { return rg.state("home").Name == "home" })
	st := rg.state("home")
	if st.State != StateFailed || !strings.Contains(st.Error, ErrLocalName.Error()) {
		t.Errorf("status = %+v, want failed with %q", st, ErrLocalName)
	}
	if n := len(rg.g.Describe().Collections); n != before {
		t.Errorf("%d collections after the refused cluster, want %d: nothing is watched", n, before)
	}
}

// TestClusterNamedByTwoOrigins names one cluster in two Secrets: the
// origin that sorts first is used and the status names the other; once
// the first goes, the second's kubeconfig is used.
func TestClusterNamedByTwoOrigins(t *testing.T) {
	rg := newRig(t)
	// Kubeconfigs that load but name no server: the members fail to
	// build and run nothing, which is all this test needs.
	a, b := []byte("apiVersion: v1\nkind: Config\n"), []byte("apiVersion: v1\nkind: Config\npreferences: {}\n")
	rg.r.Apply("secret meshd/b", []Cluster{{Name: "west", Kubeconfig: b}}, nil)
	rg.r.Apply("secret meshd/a", []Cluster{{Name: "west", Kubeconfig: a}}, nil)
	waitFor(t, "the first origin to win", func() bool {
		st := rg.state("west")
		return st.Origin == "secret meshd/a" && strings.Contains(st.Error, "also in secret meshd/b")
	})
	st := rg.state("west")
	if !strings.Contains(st.Error, ErrDuplicateName.Error()) || st.State != StateFailed {
		t.Errorf("status = %+v, want failed (no server) and %q", st, ErrDuplicateName)
	}
	rg.r.Apply("secret meshd/a", nil, nil)
	waitFor(t, "the second origin's kubeconfig", func() bool {
		st := rg.state("west")
		return st.Origin == "secret meshd/b" && st.Generation == 2
	})
	if st := rg.state("west"); strings.Contains(st.Error, ErrDuplicateName.Error()) {
		t.Errorf("status = %+v, want no conflict once one origin names the cluster", st)
	}
}
