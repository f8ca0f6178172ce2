package sources

import (
	"github.com/meshd/meshd/krt"
)

// inputKind is one field of Inputs, type-erased so that inputKinds can list
// them all and each operation over Inputs is written once.
type inputKind interface {
	isSet(in *Inputs) bool
	// setStatic sets the field to a new empty krt.Static.
	setStatic(g krt.Owner, in *Inputs, prefix string, extra ...krt.Option)
	synced(in *Inputs) <-chan struct{}
	// join sets out's field to the join of a's and b's, a's items first.
	join(g *krt.Graph, out, a, b *Inputs)
	// The writes below need a field set by setStatic. set and del report
	// false when item is not of the kind's type.
	markSynced(in *Inputs)
	set(tx *krt.Txn, in *Inputs, item any) bool
	del(tx *krt.Txn, in *Inputs, item any) bool
}

// kind is the inputKind of a field of type krt.Collection[T].
type kind[T any] struct {
	name  string
	field func(*Inputs) *krt.Collection[T]
	// options are the krt options of the field's collections, named name.
	options func(name string, extra ...krt.Option) []krt.Option
	key     func(T) string
}

// objectKind is the kind of a field holding Kubernetes objects, whose
// collections use CollectionOptions.
func objectKind[T Object](name string, field func(*Inputs) *krt.Collection[T]) inputKind {
	return kind[T]{name: name, field: field, options: CollectionOptions[T], key: Key[T]}
}

// clusterKind is the kind of a field holding Kubernetes objects whose
// names repeat across clusters (Pods, EndpointSlices, Nodes): keyed by
// ClusterKey, which is Key for the local cluster's objects.
func clusterKind[T Object](name string, field func(*Inputs) *krt.Collection[T]) inputKind {
	options := func(name string, extra ...krt.Option) []krt.Option {
		return CollectionOptions[T](name, append([]krt.Option{krt.WithKey(ClusterKey[T])}, extra...)...)
	}
	return kind[T]{name: name, field: field, options: options, key: ClusterKey[T]}
}

// singletonKind is the kind of a field holding at most one item, under
// krt.SingletonKey.
func singletonKind[T any](name string, field func(*Inputs) *krt.Collection[T]) inputKind {
	key := func(T) string { return krt.SingletonKey }
	options := func(name string, extra ...krt.Option) []krt.Option {
		return append([]krt.Option{krt.WithName(name), krt.WithKey(key)}, extra...)
	}
	return kind[T]{name: name, field: field, options: options, key: key}
}

// namedKind is the kind of a field whose items name themselves
// (ResourceName) and compare with their Equals method, krt's defaults.
func namedKind[T interface {
	ResourceName() string
	Equals(T) bool
}](name string, field func(*Inputs) *krt.Collection[T]) inputKind {
	options := func(name string, extra ...krt.Option) []krt.Option {
		return append([]krt.Option{krt.WithName(name)}, extra...)
	}
	return kind[T]{name: name, field: field, options: options, key: T.ResourceName}
}

func (k kind[T]) isSet(in *Inputs) bool { return *k.field(in) != nil }

func (k kind[T]) setStatic(g krt.Owner, in *Inputs, prefix string, extra ...krt.Option) {
	*k.field(in) = krt.NewStatic[T](g, k.options(prefix+"/"+k.name, extra...)...)
}

func (k kind[T]) synced(in *Inputs) <-chan struct{} { return (*k.field(in)).Synced() }

func (k kind[T]) join(g *krt.Graph, out, a, b *Inputs) {
	// Joined under the inputs' own options, so the join keys, compares and
	// (for Services) selects like them.
	*k.field(out) = krt.Join(g, []krt.Collection[T]{*k.field(a), *k.field(b)}, k.options("joined/"+k.name)...)
}

// static returns the field as the krt.Static setStatic made.
func (k kind[T]) static(in *Inputs) krt.Static[T] { return (*k.field(in)).(krt.Static[T]) }

func (k kind[T]) markSynced(in *Inputs) { k.static(in).MarkSynced() }

func (k kind[T]) set(tx *krt.Txn, in *Inputs, item any) bool {
	v, ok := item.(T)
	if ok {
		k.static(in).In(tx).Set(v)
	}
	return ok
}

func (k kind[T]) del(tx *krt.Txn, in *Inputs, item any) bool {
	v, ok := item.(T)
	if ok {
		k.static(in).In(tx).Delete(k.key(v))
	}
	return ok
}
