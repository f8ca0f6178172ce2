package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/meshd/meshd/sources/multicluster"
)

// TestClustersCollector exports a synced and a never-listed cluster:
// a state series per state, 1 for the cluster's; the times of the last
// list and watch where there were any; the failed requests.
func TestClustersCollector(t *testing.T) {
	listed := time.Unix(1764590400, 0)
	c := NewClustersCollector(func() []multicluster.ClusterStatus {
		return []multicluster.ClusterStatus{
			{Name: "east", State: multicluster.StateSyncing, HealthSnapshot: multicluster.HealthSnapshot{Errors: 4, ConsecutiveErrors: 4}},
			{Name: "west", State: multicluster.StateSynced, HealthSnapshot: multicluster.HealthSnapshot{
				LastList: listed, LastWatch: listed.Add(1500 * time.Millisecond), Errors: 2}},
		}
	})
	want := `
# HELP meshd_remote_cluster_errors_total Failed requests to the remote cluster's API server (unreachable, 5xx, refused credentials).
# TYPE meshd_remote_cluster_errors_total counter
meshd_remote_cluster_errors_total{cluster="east"} 4
meshd_remote_cluster_errors_total{cluster="west"} 2
# HELP meshd_remote_cluster_last_list_timestamp_seconds When a list of the remote cluster's API server last succeeded.
# TYPE meshd_remote_cluster_last_list_timestamp_seconds gauge
meshd_remote_cluster_last_list_timestamp_seconds{cluster="west"} 1.7645904e+09
# HELP meshd_remote_cluster_last_watch_timestamp_seconds When a watch of the remote cluster's API server last started.
# TYPE meshd_remote_cluster_last_watch_timestamp_seconds gauge
meshd_remote_cluster_last_watch_timestamp_seconds{cluster="west"} 1.7645904015e+09
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "meshd_remote_cluster_errors_total",
		"meshd_remote_cluster_last_list_timestamp_seconds", "meshd_remote_cluster_last_watch_timestamp_seconds"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(c, "meshd_remote_cluster_state"); n != 2*len(clusterStates) {
		t.Errorf("%d state series, want one per cluster and state (%d)", n, 2*len(clusterStates))
	}
	var states strings.Builder
	states.WriteString("# HELP meshd_remote_cluster_state State of each remote cluster: syncing (listing, not joined), synced, stale (unreachable, last endpoints kept), expired (unreachable too long, endpoints removed) or failed (bad kubeconfig).\n# TYPE meshd_remote_cluster_state gauge\n")
	for _, cluster := range []struct {
		name string
		is   multicluster.State
	}{{"east", multicluster.StateSyncing}, {"west", multicluster.StateSynced}} {
		for _, st := range clusterStates {
			v := "0"
			if st == cluster.is {
				v = "1"
			}
			states.WriteString(`meshd_remote_cluster_state{cluster="` + cluster.name + `",state="` + string(st) + `"} ` + v + "\n")
		}
	}
	if err := testutil.CollectAndCompare(c, strings.NewReader(states.String()), "meshd_remote_cluster_state"); err != nil {
		t.Error(err)
	}
}
