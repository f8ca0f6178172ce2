package app

import (
	"net"
	"path/filepath"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

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
	r.waitProblem(t, "the remote's problem", "cluster dead", "not listed within the sync timeout", "connection refused")
	r.waitMetric(t, `meshd_remote_cluster_state{cluster="dead",state="syncing"}`, func(v float64) bool { return v == 1 })
	r.waitMetric(t, `meshd_remote_cluster_state{cluster="dead",state="synced"}`, func(v float64) bool { return v == 0 })
	r.waitMetric(t, `meshd_remote_cluster_errors_total{cluster="dead"}`, func(v float64) bool { return v >= 1 })
	if code, body := r.get(t, "/readyz"); code != 200 {
		t.Errorf("/readyz = %d %q with the remote unreachable, want 200", code, body)
	}
}

// deadKubeconfig writes a kubeconfig of an API server on a loopback port
// that nothing listens on.
func deadKubeconfig(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["dead"] = &clientcmdapi.Cluster{Server: "http://" + addr}
	cfg.AuthInfos["dead"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["dead"] = &clientcmdapi.Context{Cluster: "dead", AuthInfo: "dead"}
	cfg.CurrentContext = "dead"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
