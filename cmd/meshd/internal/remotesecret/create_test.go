package remotesecret

import (
	"testing"

	"go.uber.org/goleak"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/meshd/meshd/sources/kube/kubetest"
	"github.com/meshd/meshd/sources/multicluster"
)

// TestCreateGivesAReadOnlyKubeconfig makes the reader twice (the second
// run updates, as a token rotation does) and checks the printed Secret:
// its kubeconfig lists what a remote cluster contributes and can neither
// read Secrets nor write.
func TestCreateGivesAReadOnlyKubeconfig(t *testing.T) {
	env := remote.Env(t)
	admin, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	r := Remote{Client: admin, Server: env.Config.Host, Insecure: true}
	var s *corev1.Secret
	for range 2 {
		if s, err = Create(t.Context(), r, Options{Cluster: "west"}); err != nil {
			t.Fatal(err)
		}
	}
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

// remote is an API server that authorizes as a cluster does (RBAC), so
// the reader's token is held to its ClusterRole.
var remote = kubetest.NewShared(nil, kubetest.WithAuthorization("RBAC"))

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(remote.Around(m), kubetest.IgnoredGoroutines...)
}
