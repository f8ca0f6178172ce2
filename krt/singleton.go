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
func NewSingleton[T any](g *Graph, compute func(ctx HandlerContext) *T, opts ...Option) Singleton[T] {
	opts = append(opts, WithKey(func(T) string { return SingletonKey }))
	d := newDerived(g, nil, "singleton", func(ctx HandlerContext, _ struct{}) *T { return compute(ctx) }, nil, opts)
	return singleton[T]{d}
}

// StaticSingleton is a one-item collection set directly by its owner.
type StaticSingleton[T any] struct {
	Static[T]
}

// NewStaticSingleton returns a singleton holding initial, or nothing when
// initial is nil.
func NewStaticSingleton[T any](g *Graph, initial *T, opts ...Option) StaticSingleton[T] {
	opts = append(opts, WithKey(func(T) string { return SingletonKey }))
	s := StaticSingleton[T]{NewStatic[T](g, opts...)}
	if initial != nil {
		s.Static.Set(*initial)
	}
	return s
}

// Value returns the item, and false when there is none.
func (s StaticSingleton[T]) Value() (T, bool) { return s.Get(SingletonKey) }

// Store replaces the value and returns the committed version.
func (s StaticSingleton[T]) Store(v T) uint64 { return s.Static.Set(v) }

// Clear removes the value and returns the committed version.
func (s StaticSingleton[T]) Clear() uint64 { return s.Static.Delete(SingletonKey) }
