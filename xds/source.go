package xds

import (
	"bytes"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/meshd/meshd/krt"
)

// Type URLs of the resource types the server serves.
const (
	ListenerType = "type.googleapis.com/envoy.config.listener.v3.Listener"
	RouteType    = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
	ClusterType  = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
	EndpointType = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
)

// pushOrder is the order in which a stream sends the types of one push, so
// that a Cluster arrives before its Endpoints and a Listener before its
// Route, as the xDS protocol recommends for make-before-break updates.
var pushOrder = []string{ClusterType, EndpointType, ListenerType, RouteType}

// fullStateType reports whether SotW responses of typeURL must carry every
// subscribed resource (so that omission means removal): Listeners and
// Clusters, per the xDS protocol.
func fullStateType(typeURL string) bool {
	return typeURL == ListenerType || typeURL == ClusterType
}

// shortType returns the short name of a type URL ("lds", "rds", "cds",
// "eds"), used as a metrics label; other types keep their URL.
func shortType(typeURL string) string {
	switch typeURL {
	case ListenerType:
		return "lds"
	case RouteType:
		return "rds"
	case ClusterType:
		return "cds"
	case EndpointType:
		return "eds"
	}
	return typeURL
}

// Source is one collection of resources of one type, to be served. Create
// one with NewSource.
type Source interface {
	// TypeURL returns the xDS type URL of the source's resources.
	TypeURL() string
	// entries derives, in g, the collection of serialized resources.
	entries(g *krt.Graph) krt.Collection[entry]
	// variantNames are the variants the source serves (AsVariant), none
	// for the base.
	variantNames() []string
	// demandOf is the Demand the streams' interest feeds (WithDemand),
	// nil for none.
	demandOf() *Demand
}

// NewSource returns a Source serving the items of c as resources of typeURL.
// toProto returns an item's resource name and message; a nil message skips
// the item. The message's type must match typeURL, or the item is recorded
// as a failed computation of the derived collection (see krt.Graph.Describe)
// and not served. toProto runs inside the graph's transactions, so it must
// be deterministic and must not read other collections.
//
// The server marshals each message once and keeps only its bytes. Items
// that already hold their resource serialized are better served by
// NewPackedSource, which spares the second copy.
//
// Options may add a visibility per item (WithVisibility).
func NewSource[T any](typeURL string, c krt.Collection[T], toProto func(T) (name string, msg proto.Message), opts ...SourceOption[T]) Source {
	return newSource(typeURL, c, func(in T) (*resource, error) {
		name, msg := toProto(in)
		return newResource(typeURL, name, msg)
	}, opts)
}

// NewPackedSource returns a Source serving the items of c, which hold
// their resources serialized: toAny returns an item's resource name and
// its message packed in an Any of typeURL, marshalled deterministically
// (proto.MarshalOptions.Deterministic), so that equal resources have
// equal bytes and replicas agree on versions. A nil Any skips the item;
// an Any of another type URL is recorded as a failed computation, as for
// NewSource. The server sends the Any itself to every stream, copying
// nothing, so neither it nor its bytes may be modified afterwards. toAny
// has NewSource's toProto's duties.
func NewPackedSource[T any](typeURL string, c krt.Collection[T], toAny func(T) (name string, packed *anypb.Any), opts ...SourceOption[T]) Source {
	return newSource(typeURL, c, func(in T) (*resource, error) {
		name, packed := toAny(in)
		return packedResource(typeURL, name, packed)
	}, opts)
}

// newSource returns the source of c whose items toResource turns into
// resources, nil for none.
func newSource[T any](typeURL string, c krt.Collection[T], toResource func(T) (*resource, error), opts []SourceOption[T]) Source {
	s := &source[T]{typeURL: typeURL, c: c, toResource: toResource}
	for _, o := range opts {
		o(s)
	}
	return s
}

type source[T any] struct {
	typeURL    string
	c          krt.Collection[T]
	toResource func(T) (*resource, error)
	// vis is nil when every item is visible to all namespaces.
	vis func(T) Visibility
	// variants are set by AsVariant.
	variants []string
	// namedOnly is nil when every item is served to wildcard
	// subscribers (WithNamedOnly).
	namedOnly func(T) bool
	// demand is set by WithDemand.
	demand *Demand
}

func (s *source[T]) TypeURL() string { return s.typeURL }

func (s *source[T]) variantNames() []string { return s.variants }

func (s *source[T]) demandOf() *Demand { return s.demand }

func (s *source[T]) entries(g *krt.Graph) krt.Collection[entry] {
	return krt.NewCollection(g, s.c, func(ctx krt.HandlerContext, in T) *entry {
		r, err := s.toResource(in)
		if err != nil {
			ctx.Fail(err)
			return nil
		}
		if r == nil {
			return nil
		}
		r.variants = s.variants
		r.namedOnly = s.namedOnly != nil && s.namedOnly(in)
		if s.vis != nil {
			if v := s.vis(in); !v.All() {
				r.vis = &v
			}
		}
		return &entry{res: r}
	}, krt.WithName(s.collectionName()),
		krt.WithKey(func(e entry) string { return e.res.entryKey() }),
		krt.WithEquals(func(a, b entry) bool {
			return bytes.Equal(a.res.any.Value, b.res.any.Value) && visEqual(a.res.vis, b.res.vis) &&
				a.res.namedOnly == b.res.namedOnly
		}))
}

// collectionName names the derived collection in the graph.
func (s *source[T]) collectionName() string {
	if len(s.variants) > 0 {
		return "xds/" + shortType(s.typeURL) + "/" + strings.Join(s.variants, "+")
	}
	return "xds/" + shortType(s.typeURL)
}

// entry is the item of the derived resource collections.
type entry struct{ res *resource }

// entryKey keys resources of every type in the one joined collection.
func entryKey(typeURL, name string) string { return typeURL + " " + name }

// entryKey is r's key in the joined collection, apart from the resource
// of the same name in another variant.
func (r *resource) entryKey() string {
	return entryKey(variantKey(r.typeURL, strings.Join(r.variants, "+")), r.name)
}

// resource is one serialized resource. It is immutable once built and
// shared by every stream that sends it.
type resource struct {
	typeURL string
	name    string
	// version is a hash of the serialized bytes.
	version string
	// pair is the hash of (name, version) that a stream's digest of what
	// its client holds adds up.
	pair digest
	// any wraps the serialized bytes, the only form of the resource the
	// server keeps; SotW responses share it.
	any *anypb.Any
	// vis is nil for a resource visible to every namespace.
	vis *Visibility
	// warms are the names of the resources of the dependent type that
	// the client waits for once this one is updated (warmsOn).
	warms []string
	// variants name the client variants the resource is for (AsVariant);
	// none for every client. The slice is the source's: read only.
	variants []string
	// namedOnly is set for a resource served only to the streams naming
	// it (WithNamedOnly).
	namedOnly bool
}

// newResource marshals msg once, deterministically, and versions it by
// the hash of its bytes. A nil msg is no resource: nil, nil.
func newResource(typeURL, name string, msg proto.Message) (*resource, error) {
	if msg == nil {
		return nil, nil
	}
	if got := "type.googleapis.com/" + string(msg.ProtoReflect().Descriptor().FullName()); got != typeURL {
		return nil, fmt.Errorf("resource %q: message type %s does not match %s: %w", name, got, typeURL, ErrTypeMismatch)
	}
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("resource %q: marshal: %w", name, err)
	}
	return packedResource(typeURL, name, &anypb.Any{TypeUrl: typeURL, Value: raw})
}

// packedResource versions the serialized resource packed by the hash of
// its bytes, which it shares rather than copies. A nil packed is no
// resource: nil, nil.
func packedResource(typeURL, name string, packed *anypb.Any) (*resource, error) {
	if packed == nil {
		return nil, nil
	}
	if packed.GetTypeUrl() != typeURL {
		return nil, fmt.Errorf("resource %q: message type %s does not match %s: %w", name, packed.GetTypeUrl(), typeURL, ErrTypeMismatch)
	}
	r := &resource{typeURL: typeURL, name: name, version: resourceVersion(packed.Value), any: packed}
	r.pair = pairDigest(name, r.version)
	r.warms = warmsOn(typeURL, packed.Value)
	return r, nil
}

// message returns a fresh copy of the resource's message, decoded from
// its bytes, for the debug views; nil for a resource the server has no
// bytes of (clientResource).
func (r *resource) message() (proto.Message, error) {
	if r.any == nil {
		return nil, nil
	}
	m, err := r.any.UnmarshalNew()
	if err != nil {
		return nil, fmt.Errorf("resource %q: decode: %w", r.name, err)
	}
	return m, nil
}

// clientResource stands for a resource a client says it holds (Delta's
// initial_resource_versions) and the server has no bytes of: only its
// name and version are known.
func clientResource(typeURL, name, version string) *resource {
	return &resource{typeURL: typeURL, name: name, version: version, pair: pairDigest(name, version)}
}

// size is the number of serialized bytes of the resource.
func (r *resource) size() int { return len(r.any.Value) }

// DebugValue is what the debug UI shows for an item of the resource
// collections: the resource itself (rendered as protojson), not the
// serialized wrapper, or the error decoding it.
func (e entry) DebugValue() any {
	m, err := e.res.message()
	if err != nil {
		return err.Error()
	}
	return m
}
