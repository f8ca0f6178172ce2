package collections

import (
	"bytes"
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// Resource is one xDS resource: its name and its message, held only
// serialized, deterministically, in an Any (Packed), the form
// the xDS server sends: a resource exists once, as bytes shared by the
// model and every stream. Items of the output collections are Resources;
// two are equal when their names and their bytes are, so recomputing an
// unchanged resource emits no event. Message decodes a copy.
//
// Packed is shared by every reader, the xDS server's streams included:
// neither it nor its bytes may be modified. A nil Packed has no message,
// which the xDS server skips.
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
	Packed     *anypb.Any
	VisibleTo  []string
	HiddenFrom []string
	NamedOnly  bool
}

// ResourceName returns the resource name, the item's key.
func (r Resource[M]) ResourceName() string { return r.Name }

// Equals reports whether r and o have the same name, visibility and
// serialized message.
func (r Resource[M]) Equals(o Resource[M]) bool {
	return r.Name == o.Name && slices.Equal(r.VisibleTo, o.VisibleTo) && slices.Equal(r.HiddenFrom, o.HiddenFrom) &&
		r.NamedOnly == o.NamedOnly && bytes.Equal(r.Packed.GetValue(), o.Packed.GetValue()) &&
		r.Packed.GetTypeUrl() == o.Packed.GetTypeUrl()
}

// Message returns a copy of the resource's message, decoded from its
// bytes each time it is called; the zero M (nil) when Packed is nil.
// The xDS server never needs it: it is for tests, debug views and
// tools.
func (r Resource[M]) Message() M {
	var m M
	if r.Packed == nil {
		return m
	}
	m = m.ProtoReflect().Type().New().Interface().(M)
	if err := proto.Unmarshal(r.Packed.Value, m); err != nil {
		// The bytes are the ones newResource marshalled from an M.
		panic(fmt.Sprintf("collections: decode %s %q: %v", r.Packed.TypeUrl, r.Name, err))
	}
	return m
}

// Size returns the number of serialized bytes of the message.
func (r Resource[M]) Size() int { return len(r.Packed.GetValue()) }

// IsNamedOnly reports r.NamedOnly: pass the method expression, as in
// Resource[*listenerv3.Listener].IsNamedOnly, to xds.WithNamedOnly.
func (r Resource[M]) IsNamedOnly() bool { return r.NamedOnly }

// Serialized returns the name and the serialized message, the form the
// xDS server consumes: pass the method expression, as in
// Resource[*clusterv3.Cluster].Serialized, to xds.NewPackedSource.
func (r Resource[M]) Serialized() (string, *anypb.Any) { return r.Name, r.Packed }

// newResource pairs a name with a message, which it marshals; m is not
// kept.
func newResource[M proto.Message](name string, m M) Resource[M] {
	return Resource[M]{Name: name, Packed: mustAny(m)}
}

// exported returns r visible only to the namespaces exportTo (nil: all).
func (r Resource[M]) exported(exportTo []string) Resource[M] {
	r.VisibleTo = exportTo
	return r
}
