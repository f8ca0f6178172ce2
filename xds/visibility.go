package xds

import (
	"slices"
	"strconv"
	"strings"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
)

// Visibility says which namespaces' proxies may see a resource when the
// server isolates namespaces (WithNamespaceIsolation). The zero value is
// visible to every namespace. It is the simple namespace form of Istio's
// exportTo: "*" is VisibleToAll, "." is VisibleTo(the resource's own
// namespace), and a list of namespaces is VisibleTo(list...).
type Visibility struct {
	// restricted is false for a resource visible to every namespace.
	restricted bool
	// except turns namespaces from the namespaces that may see the
	// resource into those that may not (VisibleToAllExcept).
	except bool
	// namespaces are sorted and distinct.
	namespaces []string
}

// VisibleToAll returns the visibility of a resource every namespace may
// see, the default.
func VisibleToAll() Visibility { return Visibility{} }

// VisibleTo returns the visibility of a resource only proxies of the given
// namespaces may see. With no namespace, no proxy sees the resource while
// isolation is on.
func VisibleTo(namespaces ...string) Visibility {
	ns := slices.Clone(namespaces)
	slices.Sort(ns)
	return Visibility{restricted: true, namespaces: slices.Compact(ns)}
}

// VisibleToAllExcept returns the visibility of a resource every proxy may
// see except those of the given namespaces — including proxies with no
// namespace. A model uses it for a resource that has a variant of its own
// for some namespaces.
func VisibleToAllExcept(namespaces ...string) Visibility {
	if len(namespaces) == 0 {
		return VisibleToAll()
	}
	v := VisibleTo(namespaces...)
	v.except = true
	return v
}

// All reports whether every namespace may see the resource.
func (v Visibility) All() bool { return !v.restricted }

// Namespaces returns the namespaces that may see the resource, sorted; nil
// when every namespace may. For VisibleToAllExcept it returns the
// namespaces that may not, and Except reports true.
func (v Visibility) Namespaces() []string { return slices.Clone(v.namespaces) }

// Except reports whether Namespaces lists the namespaces that may not see
// the resource (VisibleToAllExcept).
func (v Visibility) Except() bool { return v.except }

// Allows reports whether a proxy of namespace ns may see the resource.
func (v Visibility) Allows(ns string) bool {
	if !v.restricted {
		return true
	}
	_, ok := slices.BinarySearch(v.namespaces, ns)
	return ok != v.except
}

// allowsProxy reports whether a proxy may see the resource: with a
// namespace (ok), as Allows says; with none, only the resources visible to
// all, or to all except some namespaces.
func (v Visibility) allowsProxy(ns string, ok bool) bool {
	if !ok {
		return !v.restricted || v.except
	}
	return v.Allows(ns)
}

// Equal reports whether v and o allow the same namespaces.
func (v Visibility) Equal(o Visibility) bool {
	return v.restricted == o.restricted && v.except == o.except && slices.Equal(v.namespaces, o.namespaces)
}

// String returns "*", the comma-separated namespaces, or "*" followed by
// the excepted namespaces each prefixed "-" ("*,-a,-b").
func (v Visibility) String() string {
	if !v.restricted {
		return "*"
	}
	if v.except {
		return "*,-" + strings.Join(v.namespaces, ",-")
	}
	return strings.Join(v.namespaces, ",")
}

// visEqual compares two optional visibilities; nil is visible to all.
func visEqual(a, b *Visibility) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// SourceOption configures a Source made by NewSource.
type SourceOption[T any] func(*source[T])

// WithVisibility makes vis give each item's visibility, enforced when the
// server isolates namespaces (WithNamespaceIsolation). Like toProto, vis
// runs inside the graph's transactions and must be deterministic. Without
// it every resource of the source is visible to all namespaces.
func WithVisibility[T any](vis func(T) Visibility) SourceOption[T] {
	return func(s *source[T]) { s.vis = vis }
}

// NamespaceMetadataKey is the node metadata field NodeNamespace reads.
const NamespaceMetadataKey = "NAMESPACE"

// NodeNamespace is the default rule by which a server isolating namespaces
// tells a proxy's namespace: the string field NAMESPACE of the node's
// metadata when set; else, for an Istio-style node id
// "<type>~<ip>~<pod>.<namespace>~<domain>", the part of the third field
// after its first dot. Any other node has no namespace.
//
// Both are asserted by the client: isolation by namespace is a boundary
// only when the client's identity is otherwise checked (a trusted
// network, or mTLS with WithPeerNamespace, which checks the claim against
// the certificate).
func NodeNamespace(node *core.Node) (string, bool) {
	if node == nil {
		return "", false
	}
	if v := node.GetMetadata().GetFields()[NamespaceMetadataKey]; v != nil {
		if ns := v.GetStringValue(); ns != "" {
			return ns, true
		}
	}
	parts := strings.Split(node.GetId(), "~")
	if len(parts) != 4 {
		return "", false
	}
	_, ns, ok := strings.Cut(parts[2], ".")
	if !ok || ns == "" {
		return "", false
	}
	return ns, true
}

// WithNamespaceIsolation turns namespace isolation on: a proxy receives,
// and can subscribe to, only the resources visible to its namespace (see
// WithVisibility), which namespaceOf tells from its node (nil:
// NodeNamespace), or WithPeerNamespace from its client certificate. A
// proxy with no namespace sees only the resources visible to all. A name
// asked for but hidden is answered as if it did not exist, and counted in
// Stats.Denied; a wildcard subscription leaves hidden resources out; a
// resource that becomes hidden is removed from the proxies that held it.
// Default: off, every proxy sees every resource.
func WithNamespaceIsolation(namespaceOf func(node *core.Node) (namespace string, ok bool)) Option {
	return func(o *options) {
		if namespaceOf == nil {
			namespaceOf = NodeNamespace
		}
		o.namespaceOf = namespaceOf
	}
}

// setNode records the node of the stream's first request that names one
// and, under isolation, its namespace. When the namespace comes from the
// client certificate, it refuses (refuseIdentity, which ends the stream)
// a node naming another, and (refuseUnauthenticated) any request of a
// stream without a certificate unless WithAnonymous allows it.
func (s *session) setNode(node *core.Node) error {
	first := s.node == nil && node != nil
	if first {
		// Recorded even when refused below, for the registry to show.
		s.node = node
	}
	if s.anonymous && s.proto.anonymous == AnonymousNone {
		s.report(event{kind: evUnauthenticated})
		return refuse(refuseUnauthenticated, "xds: no verified client certificate, and this server serves anonymous clients nothing")
	}
	if !first {
		return nil
	}
	s.setVariant(node)
	f := s.proto.namespaceOf
	if f == nil {
		return nil
	}
	ns, ok := f(node)
	if !s.certIdentity || (s.anonymous && s.proto.anonymous == AnonymousNodeClaim) {
		s.ns, s.nsOK = ns, ok
		return nil
	}
	if !ok || (s.nsOK && ns == s.ns) {
		return nil
	}
	certNS := "none"
	if s.nsOK {
		certNS = strconv.Quote(s.ns)
	}
	s.report(event{kind: evIdentityMismatch, detail: ns})
	return refuse(refuseIdentity, "xds: node names namespace %q but the client certificate names %s", ns, certNS)
}

// hidden reports whether r is hidden from the stream's proxy. It is only
// called under isolation.
func (s *session) hidden(r *resource) bool {
	return r.vis != nil && !r.vis.allowsProxy(s.ns, s.nsOK)
}

// deny reports (evDenied) the explicitly asked names of typeURL that
// exist but are hidden from the stream's proxy.
func (s *session) deny(v view, typeURL string, names []string) {
	cur := s.resources(v, typeURL)
	for _, n := range names {
		if r := cur[n]; r != nil && s.hidden(r) {
			s.report(event{kind: evDenied, typeURL: typeURL, name: n, detail: r.vis.String()})
		}
	}
}
