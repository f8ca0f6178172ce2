// Package envoysim is an ADS client that behaves as Envoy does and
// checks the server against the rules Envoy relies on, which no gRPC
// client checks. Envoy cannot run in the test suite; this client stands
// in for it over real gRPC, on either protocol (New with SotW or Delta).
//
// What it does, as Envoy (see Envoy's "xDS REST and gRPC protocol"):
//
//   - It asks for every Cluster first (the wildcard), then for the
//     ClusterLoadAssignments its EDS clusters name, and for every
//     Listener only once its first clusters are warm; then for the
//     RouteConfigurations its listeners name. Wildcard and named
//     subscriptions share the one stream, and Subscribe and Unsubscribe
//     ask for Clusters or Listeners by name beside the wildcard of the
//     type, as Envoy's on-demand discovery does, or drop the wildcard.
//   - It keeps an added or updated EDS cluster warming until a
//     ClusterLoadAssignment for it arrives after the update, even an
//     unchanged one, and an added or updated listener until the route
//     configurations it names that the proxy does not hold arrive
//     (WarmListenersOnRoutes: all of them, again). The resource it
//     replaces serves meanwhile.
//   - It ACKs each response with its version and nonce (SotW: with the
//     whole list of names it asks for), and NACKs, with the version it
//     holds, a response holding a resource it cannot decode, one that
//     breaks the resource's validation rules, a name twice, or a route
//     configuration with validate_clusters naming an unknown cluster.
//   - When a stream ends it reconnects (Reconnect) naming what it holds:
//     SotW the version last accepted, Delta initial_resource_versions.
//
// What it checks, each a Rule of a Violation: no load assignment or
// route configuration it did not ask for (EDS before the CDS response
// naming its cluster, RDS before its listener, on Delta any name outside
// the subscription); nothing warming longer than the warming limit; a
// nonce on every response and a version on every Delta resource; no
// NACK (AllowNacks, for a test serving something invalid); on Delta, an
// answer, the resource again or its name removed, for a name dropped
// beside the wildcard. A response for a name just dropped is ignored, as Envoy
// ignores it, until a later response shows that the server read the
// request that dropped it: the server reads a stream's requests in
// order, so a response carrying a name first asked for in a request
// shows that every request before it was read.
//
// An Envoy is driven from the test goroutine: it reads and answers
// responses only inside Await, which returns once a condition holds on
// what the proxy runs, and fails the test when it does not in time:
//
//	e := envoysim.New(t, envoysim.Delta, cc, envoysim.Node("sidecar-1"))
//	e.Await("echo serves two pods", func(c *envoysim.Config) bool {
//		return len(c.ClusterEndpoints("echo")) == 2
//	})
//	e.Settle() // nothing warming
//
// It imports nothing of package xds.
package envoysim
