package krt

// SingletonKey is the key under which a singleton holds its value.
const SingletonKey = "singleton"

// Singleton is a collection of at most one item.
type Singleton[T any] interface {
	Collection[T]
	// Value returns the item, and false when there is none.
	Value() (T, bool)
}

type singleton[T any] struct {
	*derived[struct{}, T]
}

func (s singleton[T]) Value() (T, bool) { return s.Get(SingletonKey) }

// NewSingleton derives a one-item collection from nothing but what compute
// fetches, such as "the effective mesh config". A nil result means no item.
// It is recomputed whenever anything it fetched changes.
func NewSingleton[T any](g Owner, compute func(ctx HandlerContext) *T, opts ...Option) Singleton[T] {
	opts = append(opts, WithKey(func(T) string { return SingletonKey }))
	d := newDerived(g, nil, "singleton", func(ctx HandlerContext, _ struct{}) *T { return compute(ctx) }, nil, opts)
	return singleton[T]{d}
}

// StaticSingleton is a one-item collection set directly by its owner. It
// is a Singleton, so transformations read it with FetchOne. Unlike Static
// it has no multi-item writes: Set takes exactly one value, and the item's
// key is always SingletonKey. Every method is a transaction of its own; use
// Graph.Update with In to change it together with other collections.
type StaticSingleton[T any] struct {
	_ struct{} // not convertible to Static, whose Set takes many items
	*static[T]
}

// NewStaticSingleton returns a singleton holding initial, or nothing when
// initial is nil. It is synced unless WithUnsynced is given; a WithKey
// option is ignored.
func NewStaticSingleton[T any](g Owner, initial *T, opts ...Option) StaticSingleton[T] {
	opts = append(opts, WithKey(func(T) string { return SingletonKey }))
	s := StaticSingleton[T]{static: NewStatic[T](g, opts...).static}
	if initial != nil {
		s.Set(*initial)
	}
	return s
}

func (s StaticSingleton[T]) writer() Static[T] { return Static[T]{s.static} }

// Value returns the item, and false when there is none.
func (s StaticSingleton[T]) Value() (T, bool) { return s.Get(SingletonKey) }

// Set replaces the value and returns the committed version.
func (s StaticSingleton[T]) Set(v T) uint64 { return s.writer().Set(v) }

// Clear removes the value, if any, and returns the committed version.
func (s StaticSingleton[T]) Clear() uint64 { return s.writer().Delete(SingletonKey) }

// MarkSynced marks a singleton created WithUnsynced as holding its
// complete initial state, which may be no value.
func (s StaticSingleton[T]) MarkSynced() { s.writer().MarkSynced() }

// In returns a writer that applies its changes to s as part of tx.
func (s StaticSingleton[T]) In(tx *Txn) SingletonWriter[T] {
	return SingletonWriter[T]{s.writer().In(tx)}
}

// SingletonWriter changes a StaticSingleton within one transaction. It is
// valid only inside the Graph.Update call that produced its Txn.
type SingletonWriter[T any] struct {
	w Writer[T]
}

// Value returns the value as the transaction sees it.
func (w SingletonWriter[T]) Value() (T, bool) { return w.w.Get(SingletonKey) }

// Set replaces the value.
func (w SingletonWriter[T]) Set(v T) { w.w.set(SingletonKey, v) }

// Clear removes the value, if any.
func (w SingletonWriter[T]) Clear() { w.w.Delete(SingletonKey) }
