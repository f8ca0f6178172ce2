package app

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/meshd/meshd/sources/kube/kubetest"
)

// TestKubeconfigUnreachable points meshd at a cluster that does not answer:
// it starts, says in /readyz that it waits for the cluster, and stops
// cleanly.
func TestKubeconfigUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	cfg := DefaultConfig()
	cfg.Kubeconfig = writeKubeconfig(t, "https://"+addr, "x")
	r := start(t, cfg)
	code, body := r.get(t, "/readyz")
	if code != 503 || !strings.Contains(body, "source kubernetes") || !strings.Contains(body, addr) {
		t.Errorf("/readyz = %d %q, want 503 waiting for the cluster at %s", code, body, addr)
	}
	if err := r.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestKubeconfigMissing(t *testing.T) {
	cfg := DefaultConfig()
	cfg.XDSAddr, cfg.DebugAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Kubeconfig = filepath.Join(t.TempDir(), "nope")
	a, err := New(cfg)
	if err == nil {
		a.Close()
		t.Fatal("New accepted a missing kubeconfig")
	}
	if !strings.Contains(err.Error(), "--kubeconfig") {
		t.Errorf("err = %v, want it to name --kubeconfig", err)
	}
}

// startKube starts a real kube-apiserver for t, building its binaries on
// first use; it skips t with -short (see kubetest.Need).
func startKube(t *testing.T, ctx context.Context) (*kubetest.Env, kubernetes.Interface) {
	t.Helper()
	kubetest.Need(t)
	env, err := kubetest.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Stop)
	client, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return env, client
}

// TestKubeconfigEndToEnd runs meshd against a real kube-apiserver (built
// on first use; skipped with -short) together with a folder, and
// checks that services from both reach an ADS client.
func TestKubeconfigEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	env, client := startKube(t, ctx)
	ns := "meshd-app-e2e"
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ratings.yaml"), []byte(ratingsService), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseFlags([]string{"--kubeconfig", env.Kubeconfig, "--config-dir", dir,
		"--xds-addr", "127.0.0.1:0", "--debug-addr", "127.0.0.1:0", "--push-debounce", "10ms"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, cfg)
	r.waitReady(t)
	ads := newADSClient(t, r.app.XDSAddr())
	if names := ads.clusters(); !slices.Contains(names, ratingsCluster) {
		t.Fatalf("clusters = %v, want the folder's %s", names, ratingsCluster)
	}

	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80}},
		},
	}
	if _, err := client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "outbound|80||web." + ns + ".svc.cluster.local"
	ads.until("gain the cluster's service", func(n []string) bool {
		return slices.Contains(n, want) && slices.Contains(n, ratingsCluster)
	})
	if err := r.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
}
