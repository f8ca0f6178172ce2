package statuswriter

// Outcome is how one reconciliation ended.
type Outcome uint8

const (
	// Write: the object's status differs from what it should be; used
	// by Kind.Desired only.
	Write Outcome = iota
	// Written: the status was updated.
	Written
	// Unchanged: the status was as wanted; nothing was written.
	Unchanged
	// NotFound: the object is not in the cluster.
	NotFound
	// Stale: the computed status is of another generation than the
	// object; the newer version's event reconciles it again.
	Stale
)
