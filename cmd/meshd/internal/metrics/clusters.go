package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshd/meshd/sources/multicluster"
)

// ClustersCollector exports the state of each remote cluster.
type ClustersCollector struct {
	status                           func() []multicluster.ClusterStatus
	state, lastList, lastWatch, errs *prometheus.Desc
}

// clusterStates are the states meshd_remote_cluster_state has a series
// for, one of them 1.
var clusterStates = []multicluster.State{multicluster.StateSyncing, multicluster.StateSynced,
	multicluster.StateStale, multicluster.StateExpired, multicluster.StateFailed}

// NewClustersCollector returns a collector of status's remote clusters:
// meshd_remote_cluster_state{cluster,state} (1 for the cluster's state, 0
// for the others), meshd_remote_cluster_last_list_timestamp_seconds and
// ..._last_watch_timestamp_seconds (absent until the first), and
// meshd_remote_cluster_errors_total, the failed requests to its API
// server.
func NewClustersCollector(status func() []multicluster.ClusterStatus) *ClustersCollector {
	l := []string{"cluster"}
	return &ClustersCollector{
		status: status,
		state: prometheus.NewDesc("meshd_remote_cluster_state",
			"State of each remote cluster: syncing (listing, not joined), synced, stale (unreachable, last endpoints kept), expired (unreachable too long, endpoints removed) or failed (bad kubeconfig).",
			[]string{"cluster", "state"}, nil),
		lastList: prometheus.NewDesc("meshd_remote_cluster_last_list_timestamp_seconds",
			"When a list of the remote cluster's API server last succeeded.", l, nil),
		lastWatch: prometheus.NewDesc("meshd_remote_cluster_last_watch_timestamp_seconds",
			"When a watch of the remote cluster's API server last started.", l, nil),
		errs: prometheus.NewDesc("meshd_remote_cluster_errors_total",
			"Failed requests to the remote cluster's API server (unreachable, 5xx, refused credentials).", l, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *ClustersCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.state, c.lastList, c.lastWatch, c.errs} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *ClustersCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.status() {
		for _, st := range clusterStates {
			v := 0.0
			if s.State == st {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue, v, s.Name, string(st))
		}
		for d, t := range map[*prometheus.Desc]time.Time{c.lastList: s.LastList, c.lastWatch: s.LastWatch} {
			if !t.IsZero() {
				ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(t.UnixNano())/1e9, s.Name)
			}
		}
		ch <- prometheus.MustNewConstMetric(c.errs, prometheus.CounterValue, float64(s.Errors), s.Name)
	}
}
