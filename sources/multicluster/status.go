package multicluster

import (
	"maps"
	"slices"
	"strings"
	"time"
)

// ClusterStatus is one remote cluster's state, for the debug UI and
// metrics.
type ClusterStatus struct {
	Name string `json:"name"`
	// Origin is the Secret or flag that names the cluster.
	Origin string `json:"origin"`
	State  State  `json:"state"`
	// Generation counts the kubeconfigs the cluster was watched with.
	Generation int `json:"generation"`
	// Rotating is set while a new kubeconfig's informers list; the old
	// ones serve until then.
	Rotating bool `json:"rotating,omitempty"`
	// SyncTimedOut is set when the cluster has not listed within
	// WithSyncTimeout of its start.
	SyncTimedOut bool      `json:"syncTimedOut,omitempty"`
	Since        time.Time `json:"since"`
	// Error is, in one line, why the cluster fails or conflicts, if it
	// does: its kubeconfig, its origin, another origin naming it too.
	Error string `json:"error,omitempty"`
	// Objects counts what the cluster's informers hold: all of it once
	// synced, what they have listed so far before.
	Objects ObjectCounts `json:"objects"`
	HealthSnapshot
}

// ObjectCounts counts a cluster's objects by kind.
type ObjectCounts struct {
	Services       int `json:"services"`
	Pods           int `json:"pods"`
	EndpointSlices int `json:"endpointSlices"`
	Nodes          int `json:"nodes"`
}

// countObjects counts what m's collections hold; a member that could not be built
// has nothing.
func countObjects(m *member) ObjectCounts {
	if m.err != nil {
		return ObjectCounts{}
	}
	in := m.inputs
	return ObjectCounts{Services: in.Services.Len(), Pods: in.Pods.Len(),
		EndpointSlices: in.EndpointSlices.Len(), Nodes: in.Nodes.Len()}
}

// Status returns every remote cluster's state, ordered by name.
func (r *Remotes) Status() []ClusterStatus {
	now := r.opts.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]ClusterStatus, 0, len(r.clusters))
	for _, name := range slices.Sorted(maps.Keys(r.clusters)) {
		out = append(out, r.statusLocked(name, r.clusters[name], now))
	}
	return out
}

func (r *Remotes) statusLocked(name string, st *state, now time.Time) ClusterStatus {
	m := st.active
	cs := ClusterStatus{Name: name, Origin: st.origin, Generation: m.gen, Since: m.started,
		Rotating: st.next != nil, Objects: countObjects(m), HealthSnapshot: m.health.Snapshot()}
	switch {
	case m.err != nil:
		cs.State = StateFailed
	case !st.joined:
		cs.State = StateSyncing
		cs.SyncTimedOut = now.Sub(m.started) >= r.opts.syncTimeout
	case st.expired:
		cs.State = StateExpired
	case st.stale:
		cs.State = StateStale
	default:
		cs.State = StateSynced
	}
	cs.Error = statusError(m, st, r.origins[st.origin].err)
	return cs
}

// statusError says, in one line, everything wrong with a cluster: its
// kubeconfig's, its rotated kubeconfig's, its origin's, and another
// origin naming it too. Empty when nothing is.
func statusError(active *member, st *state, originErr error) string {
	var msgs []string
	for _, err := range []error{active.err, st.next.buildErr(), originErr} {
		if err != nil {
			msgs = append(msgs, err.Error())
		}
	}
	if len(st.conflict) > 0 {
		msgs = append(msgs, ErrDuplicateName.Error()+": also in "+strings.Join(st.conflict, ", "))
	}
	return strings.Join(msgs, "; ")
}

// State is where a remote cluster stands.
type State string

// The states of a remote cluster.
const (
	// StateSyncing: its informers are listing; it is not joined yet.
	StateSyncing State = "syncing"
	// StateSynced: joined, and the API server answers, or has failed
	// for less than WithStaleGrace (FailingSince says since when).
	StateSynced State = "synced"
	// StateStale: joined, but its API server has stopped answering for
	// longer than WithStaleGrace; its last items stay, flagged stale,
	// until WithStaleTimeout.
	StateStale State = "stale"
	// StateExpired: it stayed unreachable for WithStaleTimeout; its items
	// left the mesh until it answers again.
	StateExpired State = "expired"
	// StateFailed: its kubeconfig could not be used; nothing runs.
	StateFailed State = "failed"
)
