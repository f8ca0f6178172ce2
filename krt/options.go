package krt

import (
	"fmt"
	"log/slog"
	"reflect"
)

// Option configures a collection at construction.
type Option func(*options)

type options struct {
	name      string
	keyFunc   any // func(T) string
	nsFunc    any // func(T) string
	labelFunc any // func(T) map[string]string
	selFunc   any // func(T) map[string]string
	equalFunc any // func(a, b T) bool
	unsynced  bool
}

// WithName names the collection in introspection, logs and errors. Default:
// the item type's name followed by the collection's kind.
func WithName(name string) Option { return func(o *options) { o.name = name } }

// WithKey sets how an item's key is computed. Default: the item's
// ResourceName method. A collection whose items have neither panics at
// construction.
func WithKey[T any](key func(T) string) Option { return func(o *options) { o.keyFunc = key } }

// WithNamespace sets how an item's namespace is read, for FilterNamespace.
// Default: the item's GetNamespace method, else no namespace.
func WithNamespace[T any](ns func(T) string) Option { return func(o *options) { o.nsFunc = ns } }

// WithLabels sets how an item's labels are read, for FilterLabels. Default:
// the item's GetLabels method, else no labels.
func WithLabels[T any](labels func(T) map[string]string) Option {
	return func(o *options) { o.labelFunc = labels }
}

// WithSelector sets how an item's label selector is read, for
// FilterSelects. Default: the item's GetSelector method, else none. An
// empty selector selects nothing, as a Kubernetes Service's does.
func WithSelector[T any](sel func(T) map[string]string) Option {
	return func(o *options) { o.selFunc = sel }
}

// WithEquals sets how two values of an item are compared for early cutoff.
// Default: the item's Equals method, else reflect.DeepEqual.
func WithEquals[T any](eq func(a, b T) bool) Option { return func(o *options) { o.equalFunc = eq } }

// WithUnsynced makes a Static collection start unsynced; it syncs when
// MarkSynced is called. Sources use it to hold readiness until their initial
// listing is loaded. Default: a Static collection is synced at once.
func WithUnsynced() Option { return func(o *options) { o.unsynced = true } }

// ResourceNamer is implemented by items that know their own key.
type ResourceNamer interface{ ResourceName() string }

type namespacer interface{ GetNamespace() string }
type labeler interface{ GetLabels() map[string]string }
type selectorer interface{ GetSelector() map[string]string }
type equaler[T any] interface{ Equals(T) bool }

// accessors are the per-type functions a store uses to read its items.
type accessors[T any] struct {
	key       func(T) string
	namespace func(T) string            // nil: items have no namespace
	labels    func(T) map[string]string // nil: items have no labels
	selector  func(T) map[string]string // nil: items have no selector
	equal     func(a, b T) bool
}

func buildOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// resolveAccessors picks the option, else the interface, else the default
// for each accessor. It panics on misuse: an option of the wrong item type,
// or no way to compute a key.
func resolveAccessors[T any](o options, what string) accessors[T] {
	var a accessors[T]
	a.key = optFunc[T, func(T) string](o.keyFunc, "WithKey", what)
	a.namespace = optFunc[T, func(T) string](o.nsFunc, "WithNamespace", what)
	a.labels = optFunc[T, func(T) map[string]string](o.labelFunc, "WithLabels", what)
	a.selector = optFunc[T, func(T) map[string]string](o.selFunc, "WithSelector", what)
	a.equal = optFunc[T, func(a, b T) bool](o.equalFunc, "WithEquals", what)
	var zero T
	var probe any = zero // a typed nil pointer still carries its method set
	if a.key == nil {
		if _, ok := probe.(ResourceNamer); ok {
			a.key = func(t T) string { return any(t).(ResourceNamer).ResourceName() }
		} else {
			panic(fmt.Sprintf("krt: %s: item type %T has no ResourceName method and no WithKey option", what, zero))
		}
	}
	if a.namespace == nil {
		if _, ok := probe.(namespacer); ok {
			a.namespace = func(t T) string { return any(t).(namespacer).GetNamespace() }
		}
	}
	if a.labels == nil {
		if _, ok := probe.(labeler); ok {
			a.labels = func(t T) map[string]string { return any(t).(labeler).GetLabels() }
		}
	}
	if a.selector == nil {
		if _, ok := probe.(selectorer); ok {
			a.selector = func(t T) map[string]string { return any(t).(selectorer).GetSelector() }
		}
	}
	if a.equal == nil {
		if _, ok := probe.(equaler[T]); ok {
			a.equal = func(x, y T) bool { return any(x).(equaler[T]).Equals(y) }
		} else {
			a.equal = func(x, y T) bool { return reflect.DeepEqual(x, y) }
		}
	}
	return a
}

func optFunc[T any, F any](v any, option, what string) F {
	var zero F
	if v == nil {
		return zero
	}
	f, ok := v.(F)
	if !ok {
		var t T
		panic(fmt.Sprintf("krt: %s: %s option is %T, want one for items of type %T", what, option, v, t))
	}
	return f
}

func typeName[T any]() string {
	t := reflect.TypeFor[T]()
	return t.String()
}

// GraphOption configures a Graph.
type GraphOption func(*Graph)

// WithLogger sets the logger the graph reports errors to. Default: discard.
func WithLogger(l *slog.Logger) GraphOption { return func(g *Graph) { g.log = l } }

// WithErrorHistory sets how many recent errors and events each collection
// keeps for introspection. Default: 32.
func WithErrorHistory(n int) GraphOption { return func(g *Graph) { g.history = n } }

// RegisterOption configures a handler registration.
type RegisterOption func(*registerOptions)

type registerOptions struct{ replay bool }

// WithReplay delivers the collection's current items as adds in the
// handler's first batch, before any later change.
func WithReplay() RegisterOption { return func(o *registerOptions) { o.replay = true } }
