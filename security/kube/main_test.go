package kube

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/meshd/meshd/internal/leakcheck"
	"github.com/meshd/meshd/sources/kube/kubetest"
)

// apiServer is the package's API server, started by the first test that
// needs it.
var apiServer = kubetest.NewShared(nil)

func TestMain(m *testing.M) {
	leakcheck.VerifyTestMain(apiServer.Around(m), kubetest.IgnoredGoroutines...)
}

// newClient returns an admin client of the API server, or skips t.
func newClient(t *testing.T) (kubernetes.Interface, *kubetest.Env) {
	t.Helper()
	env := apiServer.Env(t)
	c, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c, env
}

// namespace creates a namespace named for t, with the service accounts
// given.
func namespace(t *testing.T, c kubernetes.Interface, accounts ...string) string {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ca-"}}
	created, err := c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, sa := range accounts {
		if _, err := c.CoreV1().ServiceAccounts(created.Name).Create(ctx,
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return created.Name
}
