// Package xds is an Aggregated Discovery Service (ADS) server that serves
// krt collections of Envoy protos to Envoy and gRPC proxyless clients, over
// both the State-of-the-World (SotW) and the Delta (incremental) protocol.
//
// The embedding loop:
//
//  1. Wrap each output collection in a Source, naming its type URL and how an
//     item becomes a named proto:
//     xds.NewSource(xds.ClusterType, clusters, func(c *clusterv3.Cluster) (string, proto.Message) { return c.Name, c })
//     or, for items that hold their resource serialized already,
//     xds.NewPackedSource(xds.ClusterType, packed, func(p Packed) (string, *anypb.Any) { return p.Name, p.Any })
//  2. s := xds.New(g, []xds.Source{...}, xds.WithPushWindow(100*time.Millisecond))
//  3. go g.Run(ctx): the graph delivers the changes the server subscribes to.
//  4. s.Serve(ctx, lis) (or s.Run(ctx) with WithAddress) until ctx ends;
//     it closes every stream and returns once all its goroutines have ended.
//  5. Read s.Proxies(), s.ConfigDump(id) and s.Stats() for debugging and
//     metrics at any time.
//
// New derives, for every source, a collection of serialized resources inside
// the graph (each resource is marshaled once, deterministically, and its
// version is a hash of those bytes) and joins them into one collection. The
// server registers a single handler on that join. It keeps only the bytes:
// a NewPackedSource's are the very bytes its items hold, shared by every
// stream, so a resource exists once in the process.
//
// # Consistency
//
// Because every type flows through one handler, each transaction's changes
// to Listeners, Routes, Clusters and Endpoints arrive as one batch, and the
// server's resource cache moves from one committed graph version to the next
// as a whole: it is never half way between two versions. Every response is
// built under one read of that cache and, when one change touches several
// types, the stream sends them in the order CDS, EDS, LDS, RDS from the same
// cache state, so a proxy never combines a Cluster, its Endpoints and a Route
// from two different input versions.
//
// Changed names are collected and handed to the streams in rounds
// (WithPushMode). By default (PushPaced) a change goes out at once when no
// round ran for a push window (WithPushWindow, default 100ms), and
// otherwise once the window since the last round has passed, however long
// the changes go on: a burst is one round, a stream is woken at most once
// per window, and a change waits about a window at most. Under sustained
// churn the window grows with the square root of the change rate, up to
// four windows, so that rounds merge more of each stream's pushes; it
// also widens while the streams fall behind (a quarter of those a round
// wakes had not yet taken the previous one), up to WithMaxDelay; a stream whose
// proxy has not answered its last response holds its next push until it
// does, at most ten windows. PushDebounce instead waits for the changes to
// pause (WithDebounce, at most WithMaxDelay after the first), as istiod
// does. The rule is internal/pace's, a pure state machine.
//
// In a round each stream subscribed to a changed name (or to its whole
// type) has the name added to its pending set and is woken. The round
// finds those streams in an index (per type, the wildcard streams, and per
// name the other streams subscribed to it or holding it), which the
// streams keep up to date as their subscriptions change, so a change costs
// what the streams it concerns cost, not a look at every stream. The
// pending set coalesces: a slow or stuck client holds at most one pending
// entry per subscribed name, never a queue of responses, and never delays
// other streams. A flush sends each pending name at
// its current version, which may be newer than the round that made it
// pending; so a flush that sends anything also takes in the names changed
// since (those of the round under way and those no round has taken yet,
// which the cache keeps with the resources), and a stream always holds
// what one committed version holds: a change never reaches it ahead of one
// committed before it (a route naming a new cluster before the cluster).
// A flush with nothing to send takes nothing in, so pushes stay paced.
//
// # Protocol
//
// The protocol is a pure state machine, session, kept apart from the
// gRPC stream as raft keeps RawNode apart from its I/O: requests and
// cache changes go in, responses and events come out, and it does no
// I/O, reads no clock and takes no lock. Each stream's loop (conn, in
// stream.go) is the only I/O around it:
//
//  1. A receive goroutine turns the stream's Recv into a channel. A pure
//     answer — an ACK that changes no subscription, most requests under
//     churn — it applies itself under conn.mu, and tells the loop only
//     when the loop holds a push for it (ack.go).
//  2. The loop selects on that channel, the stream's wake-up channel (a
//     change notification: the session's pending set gained names), the
//     unanswered-response timer, the push hold's timer (hold.go), and the
//     stream's and server's ends.
//  3. For a request or a wake-up it takes conn.mu and one read of the
//     cache, and asks the session to apply the request (session.sotw or
//     session.delta) and then to flush (session.flush), which returns the
//     responses owed, in push order.
//  4. It counts, logs and observes the events the session reported (ACK,
//     NACK, resumed, denied, limit, unknown type, identity mismatch), lets
//     go of the locks, and sends the responses. A refused request ends the
//     stream with its status.
//
// The scripts in testdata/*.txt drive sessions directly, one protocol
// rule per file (go test ./xds -run TestProtocol; -rewrite refreshes
// their expected output).
//
// Both protocols share one subscription state per stream and type (wildcard
// flag, subscribed names, the resource versions the client holds, nonces,
// ACK and NACK). Its names and held resources are slices sorted by name
// (sortedSet), and the index keeps a name's streams as a bitset of stream
// slots (slotSet), not maps: a hundred wildcard streams of 4,000 names
// each hold 400,000 entries. Listener and Cluster responses of the SotW protocol carry
// the complete subscribed set, so a removed resource is removed by omission;
// Route and Endpoint responses carry only changed resources, and removals
// of those types are not sent. The Delta protocol sends changed resources
// and names the removed ones in removed_resources.
//
// A NACK keeps the resources of the rejected response at the versions the
// client held before it: later SotW Listener and Cluster responses carry
// those, the rejected versions are not sent again, and a rejected resource
// is sent again only once it changes. The NACK's detail is recorded in the
// proxy registry.
//
// # Locks
//
// The resource cache's lock is taken in cache.go only: by the join
// handler to apply a batch, by the push loop to start and end a round,
// and by cache.read, through which every reader
// (a stream's step, the request codec, Stats) gets a view. Locks are
// taken in the order conn.mu, then the cache's read lock, then the
// counters', the codec's list cache's, the subscriber index's and the
// shared first responses' locks, which are leaves; the server's registry
// lock (Server.mu) is never held with conn.mu or the cache's. A round
// holds no lock across the streams it wakes: it reads the index, lets
// go, and takes each stream's conn.mu in turn.
//
// # Responses
//
// The server encodes responses itself, in the wire format: the bytes of a
// resource, serialized once and shared by every stream, are referenced by
// the response rather than copied into it, and only the version, the nonce
// and the small fields around each resource are a stream's own work.
// A wildcard subscription's first response, every resource of its type
// (and variant) but those served by name only, is the same for every
// client that connects while the cache holds the same resources: it is
// sorted and summed into a version once per batch applied and type, and
// encoded once per protocol: those streams share it, each sending those
// bytes and its own nonce (initial.go).
//
// # Versions
//
// A resource's version is a hash of its bytes, 8 characters long: a
// Delta response carries one per resource. A response's version (SotW
// version_info, Delta system_version_info) is not the cache's graph
// version, which differs between replicas and across restarts, but a
// digest of what the client holds once it accepts the response: a 128-bit
// sum of a hash of each (name, version) pair the stream holds of the
// type, kept up to date as names are sent and dropped, never recounted.
// Equal versions thus mean equal content on any server, and replicas
// serving the same config send the same versions whatever their history.
//
// So a proxy moving to another replica, or reconnecting after a restart,
// is not sent what it holds. A SotW client names its last accepted version
// in its first request of a type on the new stream; if that is the digest
// of what the server would send the request (the names asked for that
// exist and the proxy may see, or all of them for a wildcard), the server
// records those resources as sent and acknowledged and sends nothing
// (Stats.Resumed, TypeStatus.Resumed); otherwise it answers as to any
// first request. A Delta client names each resource's version
// (initial_resource_versions) and is sent only the resources that differ
// and the names of those gone.
//
// # Warming
//
// Envoy keeps an updated Cluster warming until it receives that cluster's
// ClusterLoadAssignment again, even unchanged; over Delta it does not ask
// for it, its subscriptions being the same. An updated Listener warms
// until it has its RouteConfiguration (Envoy's documentation says a held
// one serves; the server resends it anyway). So a push that changes a
// Cluster or Listener a stream holds also sends, after it, the load
// assignment of an EDS cluster and the RDS routes of a listener that the
// stream subscribes to, whether or not they changed. gRPC clients do not
// warm: WithWarmingFor (with EnvoyNode) keeps the resends to the clients
// that do.
//
// # Client variants
//
// A Source made with AsVariant serves, for some names, the form of a
// resource a group of clients needs instead of the base one (an older
// client that rejects a newer field). WithClientVariants tells a
// stream's variant from its node; that stream sees the variant's
// resources where they exist and the base ones elsewhere, and
// ProxyStatus.Variant names it.
//
// # Served by name only
//
// A Source made with WithNamedOnly serves some resources only to the
// streams that name them, such as the Listener a gRPC xDS server asks
// for by its own address: a wildcard subscription leaves them out (its
// responses, its version digest and its resumption alike), and a change
// of one wakes only the streams naming or holding it. A Delta client
// that drops one beside its wildcard is sent its name removed: it cannot
// tell on its own that the wildcard leaves it out.
//
// A Demand (NewDemand, WithDemand) turns the names streams ask for into
// a collection, so that the model builds such resources only while a
// stream names them: one server listener per gRPC server connected,
// not one per workload address and port.
//
// # Namespace isolation
//
// A source may give each resource a Visibility (WithVisibility): every
// namespace, a listed set (the namespace form of Istio's exportTo), or
// every namespace but some (VisibleToAllExcept, for a resource some
// namespaces have a variant of). With
// WithNamespaceIsolation the server tells each proxy's namespace from its
// node (NodeNamespace by default) and treats a resource hidden from it as
// absent: wildcard subscriptions leave it out, a named request for it is
// answered as for a missing name (and counted in Stats.Denied), and a
// resource that becomes hidden is removed from the proxies that held it.
// Without the option no visibility is computed or checked.
//
// The node's namespace is the client's claim. WithPeerNamespace binds it
// to the client's verified certificate instead (SPIFFENamespace reads an
// Istio-style SPIFFE ID): the stream's namespace is the certificate's, and
// a node naming another is refused with PermissionDenied. A stream
// without a verified certificate is anonymous: WithAnonymous says whether
// it is refused (Unauthenticated, the default), sees what is visible to
// all, or is trusted with its node's claim. The stream code reads the
// certificate once, when the stream opens, and hands the session its
// namespace as data; the registry (ProxyStatus.Identity,
// CertificateExpiry) shows every stream's authenticated identity.
//
// Serve may serve plaintext listeners beside the TLS one (a local port);
// their streams are anonymous.
//
// # Limits
//
// Everything a client sends is bounded: each request by WithMaxMessageSize,
// the names a stream holds subscribed by WithMaxSubscribedNames, the
// streams of a connection by WithMaxConcurrentStreams, and connections by
// WithMaxConnections, and the state kept for disconnected proxies by
// WithRetention and WithMaxRetainedNames. A request for a type the server
// does not serve creates no state. Stats counts what each limit ended
// (LimitExceeded), the unknown types asked for (UnknownTypes), the names
// denied under isolation (Denied), the identity mismatches
// (IdentityMismatch), the anonymous streams refused (Unauthenticated),
// and the proxies that left a response unanswered longer than
// WithUnansweredAfter (Unanswered; each is also logged).
//
// # Disconnections
//
// When a stream ends, the registry records why (ProxyStatus.CloseReason):
// the client closed or cancelled it, its connection closed, the server
// closed the connection for a keepalive timeout or at its maximum age,
// the server shut down, or it refused a request. gRPC hands a stream
// handler only a cancelled context, so the server tells these apart from
// its connections, which it follows from their handshake (when each last
// read, and who closed it first). A node id's ended streams, the last
// MaxSessions, are its History, and its newest ended stream replaces the
// earlier ones among the retained: a proxy that reconnects is one proxy.
//
// # Requests
//
// The server decodes discovery requests with its own gRPC codec: resource
// names it serves come back as the cache's own strings, so the thousands
// of names a SotW client repeats in every ACK allocate nothing, and a SotW
// ACK repeating the last list is recognised without hashing a name. The
// names and current versions of a reconnecting Delta client's
// initial_resource_versions come back as the cache's strings too, and are
// held as the cache's resources, whose hashes are computed already.
package xds
