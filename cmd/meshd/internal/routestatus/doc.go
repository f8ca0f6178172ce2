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
// The loop is statuswriter's: handlers on the status and route collections
// feed a coalescing work queue, one worker writes only what differs, under
// a token bucket (Options.QPS, Burst), with conflicts retried on a fresh
// GET and other failures retried with per-route backoff. A route not in
// the cluster (gone, or only in a folder source) is skipped. Nothing is
// written while Run is not running: a replica that is not the leader only
// computes.
package routestatus
