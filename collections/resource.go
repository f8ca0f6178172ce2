package collections

import (
	"slices"

	"google.golang.org/protobuf/proto"
)

// Resource is one xDS resource: its name and its proto. Items of the
// output collections are Resources; two are equal when their names are and
// their messages are by proto.Equal, so recomputing an unchanged resource
// emits no event.
//
// The Message of a Resource in a collection must not be modified: it is
// shared with every reader.
//
// VisibleTo lists the namespaces whose proxies may see the resource, nil
// meaning every namespace: the service's exportTo (AnnotationExportTo) for
// the resources of one service (clusters, load assignments, gRPC listeners
// and route configurations). HiddenFrom lists namespaces that may not see
// it even so: the plain sidecar listener and route configuration of a port
// are hidden from the namespaces that have a variant of their own
// (WithNamespaceViews).
//
// NamedOnly is set on a resource that only a client naming it can use,
// to be served by name only (xds.WithNamedOnly): the server listeners,
// which a gRPC xDS server asks for by its own address, and which a
// wildcard subscriber such as an Envoy could not bind.
type Resource[M proto.Message] struct {
	Name       string
	Message    M
	VisibleTo  []string
	HiddenFrom []string
	NamedOnly  bool
}

// ResourceName returns the resource name, the item's key.
func (r Resource[M]) ResourceName() string { return r.Name }

// Equals reports whether r and o have the same name, visibility and equal
// messages.
func (r Resource[M]) Equals(o Resource[M]) bool {
	return r.Name == o.Name && slices.Equal(r.VisibleTo, o.VisibleTo) && slices.Equal(r.HiddenFrom, o.HiddenFrom) &&
		r.NamedOnly == o.NamedOnly && proto.Equal(r.Message, o.Message)
}

// IsNamedOnly reports r.NamedOnly: pass the method expression, as in
// Resource[*listenerv3.Listener].IsNamedOnly, to xds.WithNamedOnly.
func (r Resource[M]) IsNamedOnly() bool { return r.NamedOnly }

// Proto returns the name and the message, the form the xDS server consumes:
// pass the method expression, as in
// Resource[*clusterv3.Cluster].Proto, as a func(T) (string, proto.Message).
func (r Resource[M]) Proto() (string, proto.Message) { return r.Name, r.Message }

// newResource pairs a name with a message.
func newResource[M proto.Message](name string, m M) Resource[M] {
	return Resource[M]{Name: name, Message: m}
}

// exported returns r visible only to the namespaces exportTo (nil: all).
func (r Resource[M]) exported(exportTo []string) Resource[M] {
	r.VisibleTo = exportTo
	return r
}
