package debugui

import (
	"net/http"
	"time"
)

// Replica is this process's place among meshd replicas that elect a leader
// on a Kubernetes Lease: every replica serves xDS, only the leader writes
// to the cluster. The header of the page shows it, so that whoever opens
// one replica's UI sees which role it has.
type Replica struct {
	// Lease is the Lease the replicas compete for, as "namespace/name".
	Lease string `json:"lease"`
	// Identity is this process's name in the Lease.
	Identity string `json:"identity"`
	// Leading is true while this process holds the Lease.
	Leading bool `json:"leading"`
	// Leader is the identity last seen holding the Lease; empty until one
	// is seen.
	Leader string `json:"leader,omitempty"`
	// Since is when Leader was first seen holding the Lease.
	Since time.Time `json:"since,omitzero"`
	// Terms counts the terms this process has won.
	Terms uint64 `json:"terms"`
}

// ReplicaResult is the answer of api/replica and the "replica" stream
// event.
type ReplicaResult struct {
	// Available is false when the handler has no replica view (the binary
	// runs without leader election); Replica is then absent.
	Available bool     `json:"available"`
	Replica   *Replica `json:"replica,omitempty"`
}

func (h *Handler) replica() ReplicaResult {
	if h.opts.replica == nil {
		return ReplicaResult{}
	}
	r := h.opts.replica()
	return ReplicaResult{Available: true, Replica: &r}
}

func (h *Handler) serveReplica(w http.ResponseWriter, r *http.Request) {
	h.writeJSON(w, h.replica())
}
