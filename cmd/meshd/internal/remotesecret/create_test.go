package remotesecret

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources/kube/kubetest"
	"github.com/meshd/meshd/sources/multicluster"
)

// TestCreateGivesAReadOnlyKubeconfig makes the reader twice (the second
// run updates, as a token rotation does) and checks the printed Secret:
// its kubeconfig lists what a remote cluster contributes and can neither
// read Secrets nor write.
func TestCreateGivesAReadOnlyKubeconfig(t *testing.T) {
	s := createReader(t, "west", 2)
	out, err := YAML(s)
	if err != nil {
		t.Fatal(err)
	}
	var printed corev1.Secret
	if err := yaml.UnmarshalStrict(out, &printed); err != nil {
		t.Fatalf("printed Secret does not decode: %v\n%s", err, out)
	}
	clusters, err := multicluster.ClustersOfSecret(&printed)
	if err != nil || len(clusters) != 1 || clusters[0].Name != "west" || printed.Labels[multicluster.LabelSecret] != "true" {
		t.Fatalf("printed Secret names %+v (err %v), labels %v; want cluster west, labelled", clusters, err, printed.Labels)
	}
	rc, err := clientcmd.RESTConfigFromKubeConfig(clusters[0].Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	reader, ctx := kubernetes.NewForConfigOrDie(rc), t.Context()
	if _, err := reader.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("reader lists pods: %v", err)
	}
	if _, err := reader.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("reader lists endpointslices: %v", err)
	}
	if _, err := reader.CoreV1().Secrets("").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("reader lists secrets: err %v, want forbidden", err)
	}
	_, err = reader.CoreV1().Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "x"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("reader creates a service: err %v, want forbidden", err)
	}
}

// createReader runs Create for cluster times times on the remote API
// server, and returns the last Secret.
func createReader(t *testing.T, cluster string, times int) *corev1.Secret {
	t.Helper()
	env := remote.Env(t)
	admin, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	r := Remote{Client: admin, Server: env.Config.Host, Insecure: true}
	var s *corev1.Secret
	for range times {
		if s, err = Create(t.Context(), r, Options{Cluster: cluster}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// remote is an API server that authorizes as a cluster does (RBAC), so
// the reader's token is held to its ClusterRole.
var remote = kubetest.NewShared(nil, kubetest.WithAuthorization("RBAC"))

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(remote.Around(m), kubetest.IgnoredGoroutines...)
}

// TestReaderSecretJoins joins a remote cluster through the Secret Create
// prints, on an API server that holds the reader to its ClusterRole: the
// cluster syncs with no request refused, so a remote cluster's source
// reads no more than meshd-remote-reader grants. (It has no Gateway API
// or Istio client, so it reads no routes or policies, and meshd writes
// no route status there: each cluster's own meshd does.)
func TestReaderSecretJoins(t *testing.T) {
	s := createReader(t, "south", 1)
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
