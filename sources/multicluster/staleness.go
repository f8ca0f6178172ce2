package multicluster

import (
	"strconv"
	"time"
)

// stalePolicy decides what a joined cluster's health calls for. A
// cluster is flagged stale only once it has failed continuously for a
// while (failures requests in a row, over at least grace), so one lost
// watch or a brief blip of its API server does not flip its items stale
// and back; the first request that succeeds clears the flag.
type stalePolicy struct {
	// failures is how many requests in a row must fail (WithStaleFailures).
	failures uint64
	// grace is how long they must have failed (WithStaleGrace).
	grace time.Duration
	// timeout is how long they may fail before the cluster's items leave
	// the mesh (WithStaleTimeout).
	timeout time.Duration
}

// verdict is what a joined cluster's health calls for.
type verdict int

const (
	// serving: the cluster answers, or has failed too briefly to tell;
	// its items are served as they are.
	serving verdict = iota
	// stale: it has been failing past the grace; its last items are
	// served, flagged stale.
	stale
	// expired: it has been failing for the stale timeout; its items
	// leave the mesh until it answers.
	expired
)

// judge returns what h calls for at now. Expiry needs what staleness
// needs too, so a cluster is never expired before it could be stale.
func (p stalePolicy) judge(h HealthSnapshot, now time.Time) verdict {
	if h.FailingSince.IsZero() {
		return serving
	}
	failing := now.Sub(h.FailingSince)
	switch {
	case h.ConsecutiveErrors < p.failures || failing < p.grace:
		return serving
	case failing >= p.timeout:
		return expired
	default:
		return stale
	}
}

func (v verdict) String() string {
	switch v {
	case serving:
		return "serving"
	case stale:
		return "stale"
	case expired:
		return "expired"
	}
	return "verdict(" + strconv.Itoa(int(v)) + ")"
}
