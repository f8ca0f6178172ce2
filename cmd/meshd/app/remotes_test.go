package app

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/meshd/meshd/sources/kube/kubetest"
	"github.com/meshd/meshd/sources/multicluster"
)

// TestUnreachableRemoteNeverHoldsReadiness runs meshd on a folder with a
// remote cluster whose API server never answers: /readyz answers at once,
// and once the sync timeout has passed the cluster's state says so in the
// clusters API, the problems and /metrics, with its failed requests.
func TestUnreachableRemoteNeverHoldsReadiness(t *testing.T) {
	kubeconfig := deadKubeconfig(t)
	cfg, err := ParseFlags([]string{"--config-dir", t.TempDir(), "--remote-kubeconfig", "dead=" + kubeconfig,
		"--remote-sync-timeout", "1s", "--xds-addr", "127.0.0.1:0", "--debug-addr", "127.0.0.1:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, cfg)
	r.waitReady(t)
	st := waitCluster(t, r, "dead", multicluster.StateSyncing)
	if st.Origin != "--remote-kubeconfig" {
		t.Errorf("origin %q, want --remote-kubeconfig", st.Origin)
	}
	r.waitProblem(t, "the remote's problem", "cluster dead", "not listed within the sync timeout", "503 Service Unavailable")
	r.waitMetric(t, `meshd_remote_cluster_state{cluster="dead",state="syncing"}`, func(v float64) bool { return v == 1 })
	r.waitMetric(t, `meshd_remote_cluster_state{cluster="dead",state="synced"}`, func(v float64) bool { return v == 0 })
	r.waitMetric(t, `meshd_remote_cluster_errors_total{cluster="dead"}`, func(v float64) bool { return v >= 1 })
	if code, body := r.get(t, "/readyz"); code != 200 {
		t.Errorf("/readyz = %d %q with the remote unreachable, want 200", code, body)
	}
}

// deadKubeconfig writes a kubeconfig of an API server, on loopback,
// that fails every request as one that is down does.
func deadKubeconfig(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down for the test", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := kubetest.WriteKubeconfig(path, srv.URL); err != nil {
		t.Fatal(err)
	}
	return path
}
