package debugui

import (
	"net/http"

	"github.com/meshd/meshd/sources/multicluster"
)

// ClustersResult is the answer of api/clusters and the "clusters" stream
// event: each remote cluster's sync state, last successful list and
// watch, and errors.
type ClustersResult struct {
	// Available is false when the handler has no clusters view (the
	// binary runs without remote clusters); Clusters is then absent.
	Available bool `json:"available"`
	// Local is the local cluster's name (--cluster-name), "" when it is
	// unnamed.
	Local    string                       `json:"local,omitempty"`
	Clusters []multicluster.ClusterStatus `json:"clusters,omitempty"`
}

// WithClusters sets the local cluster's name ("" when unnamed) and the
// remote clusters' status behind api/clusters. The function is called
// from request goroutines. Default: none.
func WithClusters(local string, f func() []multicluster.ClusterStatus) Option {
	return func(o *options) { o.localCluster, o.clusters = local, f }
}

func (h *Handler) clusters() ClustersResult {
	if h.opts.clusters == nil {
		return ClustersResult{}
	}
	return ClustersResult{Available: true, Local: h.opts.localCluster, Clusters: h.opts.clusters()}
}

func (h *Handler) serveClusters(w http.ResponseWriter, r *http.Request) {
	h.writeJSON(w, h.clusters())
}
