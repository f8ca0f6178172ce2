// Package routestatus writes the Gateway API status of HTTPRoutes and
// GRPCRoutes attached to Services (GAMMA) back to the cluster.
//
// The status itself is computed by the mesh model
// (collections.Model.RouteStatus); a Writer only turns it into each route's
// status.parents entries for its controller name and writes them through
// the status subresource:
//
//	w := routestatus.New(gatewayClient, model.RouteStatus,
//		routestatus.Routes{HTTP: in.HTTPRoutes, GRPC: in.GRPCRoutes},
//		routestatus.Options{ControllerName: "meshd.io/mesh-controller", QPS: 10, Burst: 20})
//	go w.Run(ctx) // for as long as this replica leads
//
// # What is written
//
// For every spec.parentRefs entry of kind Service (group "" or "core") the
// writer owns one status.parents entry: the parentRef as written in the
// spec, the controller name, and the conditions Accepted and ResolvedRefs
// with the route's generation as observedGeneration. A condition keeps its
// lastTransitionTime while its status stays the same. Entries of other
// controllers are never touched; the writer's own entries for parents the
// route no longer has are removed, and so are all of them when the route
// has no Service parent any more.
//
// # How
//
// Run registers handlers on the status and route collections (replaying
// their current items, so each term starts by reconciling everything) and
// feeds the affected route keys into a client-go work queue, which
// coalesces repeated changes to one route. One worker compares the wanted
// entries with the route's current status as the route collection holds it
// and writes only when they differ, so a resync or an echo of its own write
// costs no API call. Writes pass a token bucket (Options.QPS, Burst); a
// conflict is retried at once on a fresh GET, other failures are logged and
// retried with per-route exponential backoff. A route that is not in the
// cluster (gone, or only in a folder source) is skipped: NotFound is not an
// error.
//
// Nothing is written, and no work is queued, while Run is not running: a
// replica that is not the leader only computes. When Run's context ends it
// stops before the next write, unregisters its handlers, drops its queue
// and returns once its worker has; a later Run starts afresh.
package routestatus
