package xds

// Resources served by name only. Some resources are asked for by exactly
// one client, by a name only it knows: a gRPC xDS server asks for the
// Listener of its own listening address. A wildcard subscriber wants every
// resource it could use, and such a resource is of no use to it — an
// Envoy sent every workload's server listener could bind none of their
// addresses — while each one makes every wildcard response larger and
// every change of one a push to every wildcard stream. A Source marks
// them with WithNamedOnly: a wildcard subscription leaves them out, and a
// stream holds one only while it names it.

// WithNamedOnly makes namedOnly tell the items served only to the streams
// that ask for them by name: a wildcard subscription (SotW or Delta)
// leaves them out, as if they did not exist, and a change of one wakes
// only the streams naming it. Like toProto, namedOnly runs inside the
// graph's transactions and must be deterministic. Default: every item is
// served to wildcard subscribers.
func WithNamedOnly[T any](namedOnly func(T) bool) SourceOption[T] {
	return func(s *source[T]) { s.namedOnly = namedOnly }
}

// wants reports whether the client subscribes to name, whose current
// resource is r (nil: none): it names it, or subscribes to the whole
// type and r is not served by name only.
func (ts *typeState) wants(name string, r *resource) bool {
	if ts.names.has(name) {
		return true
	}
	return ts.wildcard && (r == nil || !r.namedOnly)
}
