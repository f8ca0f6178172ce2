// Package statuswriter writes status that meshd computes back to the
// Kubernetes objects it was computed from: the loop that the route status
// and policy status writers share.
//
// A Writer serves one or more kinds of object (Kind). Run registers
// handlers on each kind's collection, and on the collections of computed
// status (Triggers), replaying their current items so that each term
// starts by reconciling everything; the affected keys, "Kind/namespace/
// name", go into a client-go work queue that coalesces repeated changes
// to one object. One worker asks the kind what the object's status should
// be, on the collection's copy (almost always current), and writes only
// when it differs, so a resync or the echo of its own write costs no API
// call. A copy that the writer's own write has replaced on the server,
// met before the collection delivers that write, is skipped as stale
// rather than written from again (which could only conflict). Writes pass a token bucket shared by every kind; a conflict is
// retried at once on a fresh GET, other failures are logged and retried
// with per-key exponential backoff, and an update the server rejects as
// invalid waits for the object's next change. An object not in the
// cluster (deleted, or from a source without resource versions, such as a
// folder) is skipped: NotFound is not an error.
//
// Nothing is written, and no work is queued, while Run is not running: a
// replica that is not the leader only computes. When Run's context ends
// it stops before the next write, unregisters its handlers, drops its
// queue and returns once its worker has; a later Run starts afresh.
package statuswriter
