package app

import (
	"context"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/meshd/meshd/sources/kube/kubetest"
	"github.com/meshd/meshd/xds/xdstest"
)

// TestCAClusterMode runs two meshd replicas with --ca on a real API
// server: they share the root of one Secret, and sign for a service
// account's bound token, refusing that token a CSR for another account.
func TestCAClusterMode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kubetest.Need(t)
	env, err := kubetest.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	client, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := "meshd-ca"
	client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	tr, err := client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "a",
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{Audiences: []string{"meshd-ca"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	serverCA := xdstest.NewCA(t)
	cert, key := xdstest.WriteKeyPair(t, t.TempDir(), "server", serverCA.Server(t))
	var bundles []string
	for range 2 {
		cfg, err := ParseFlags([]string{"--kubeconfig", env.Kubeconfig, "--xds-addr", "127.0.0.1:0", "--debug-addr", "127.0.0.1:0",
			"--xds-tls-cert", cert, "--xds-tls-key", key, "--ca", "--ca-secret-namespace", ns, "--write-status=false"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := start(t, cfg)
		r.waitReady(t)
		resp, err := sign(t, r.app.XDSAddr(), serverCA, tr.Status.Token)
		if err != nil {
			t.Fatal(err)
		}
		bundles = append(bundles, resp.CertChain[len(resp.CertChain)-1])
		_, err = sign(t, r.app.XDSAddr(), serverCA, tr.Status.Token, "spiffe://cluster.local/ns/"+ns+"/sa/b")
		if status.Code(err) != codes.PermissionDenied {
			t.Fatalf("a's token asking for b: %v", err)
		}
	}
	if bundles[0] != bundles[1] {
		t.Fatal("the two replicas sign with different roots")
	}
	if _, err := client.CoreV1().Secrets(ns).Get(ctx, "meshd-ca", metav1.GetOptions{}); err != nil {
		t.Fatalf("the CA's Secret: %v", err)
	}
}
