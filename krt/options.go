package krt

import (
	"fmt"
	"log/slog"
	"reflect"
	"time"
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
	if isCollectionType[T]() {
		// A collection of collections: keyed by name, compared by identity,
		// never walked by reflect.DeepEqual.
		if a.key == nil {
			a.key = func(c T) string { return any(c).(interface{ Name() string }).Name() }
		}
		if a.equal == nil {
			a.equal = func(x, y T) bool { return any(x) == any(y) }
		}
	}
	if a.key == nil {
		a.key = method[T, func(T) string]("ResourceName")
		if a.key == nil {
			panic(fmt.Sprintf("krt: %s: item type %T has no ResourceName method and no WithKey option", what, zero))
		}
	}
	if a.namespace == nil {
		a.namespace = method[T, func(T) string]("GetNamespace")
	}
	if a.labels == nil {
		a.labels = method[T, func(T) map[string]string]("GetLabels")
	}
	if a.selector == nil {
		a.selector = method[T, func(T) map[string]string]("GetSelector")
	}
	if a.equal == nil {
		a.equal = method[T, func(T, T) bool]("Equals")
	}
	if a.equal == nil {
		a.equal = func(x, y T) bool { return reflect.DeepEqual(x, y) }
	}
	return a
}

// method returns T's method name as a function of type F taking the
// receiver first, or nil when T has no such method of that type. A method
// expression obtained once through reflection is a direct call, unlike a
// type assertion on any(t), which copies t to the heap on every call.
func method[T any, F any](name string) F {
	var zero F
	t := reflect.TypeFor[T]()
	m, ok := t.MethodByName(name)
	if !ok {
		return zero
	}
	if t.Kind() == reflect.Interface {
		// Interface methods have no method expression; call through the
		// interface value, which holds no copy to make.
		return ifaceMethod[T, F](name)
	}
	f, _ := m.Func.Interface().(F)
	return f
}

// ifaceMethod adapts a method of an interface item type to F. Converting
// an interface value to any copies nothing, so a type assertion is cheap.
func ifaceMethod[T any, F any](name string) F {
	var f any
	switch name {
	case "ResourceName":
		f = func(t T) string { return any(t).(interface{ ResourceName() string }).ResourceName() }
	case "GetNamespace":
		f = func(t T) string { return any(t).(interface{ GetNamespace() string }).GetNamespace() }
	case "GetLabels":
		f = func(t T) map[string]string { return any(t).(interface{ GetLabels() map[string]string }).GetLabels() }
	case "GetSelector":
		f = func(t T) map[string]string {
			return any(t).(interface{ GetSelector() map[string]string }).GetSelector()
		}
	case "Equals":
		f = func(x, y T) bool { return any(x).(interface{ Equals(T) bool }).Equals(y) }
	}
	out, _ := f.(F)
	return out
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

// WithParallelism sets how many goroutines may compute the dirty inputs of
// one collection in a transaction; a transaction uses that many, at most
// GOMAXPROCS, when a collection has enough dirty inputs (64) to gain, and
// otherwise computes on the writer's goroutine alone. 1 or less computes
// serially. Outputs and events do not depend on it. Transformations must
// therefore be safe to call concurrently for different inputs, as pure
// functions of their input and fetches are. Default: GOMAXPROCS when the
// graph is made; at GOMAXPROCS=1 every computation is serial whatever n
// is (docs/krt.md has the figures).
func WithParallelism(n int) GraphOption {
	return func(g *Graph) { g.computing = make([]computing, max(n, 1)) }
}

// WithStallThreshold sets how long one transformation may run before
// Graph.Run's watchdog reports it as stalled: a warning in the log with
// the goroutine's stack, the collection's Stalls counter, and the Stall in
// Describe and Busy until it returns. Zero or less disables the watchdog.
// Default: 5s.
func WithStallThreshold(d time.Duration) GraphOption { return func(g *Graph) { g.stallAfter = d } }

// RegisterOption configures a handler registration.
type RegisterOption func(*registerOptions)

type registerOptions struct{ replay, inline bool }

// WithReplay delivers the collection's current items as adds in the
// handler's first batch, before any later change.
func WithReplay() RegisterOption { return func(o *registerOptions) { o.replay = true } }

// isCollectionType reports whether T is an interface type of krt
// collections, such as Collection[Pod].
func isCollectionType[T any]() bool {
	t := reflect.TypeFor[T]()
	return t.Kind() == reflect.Interface && t.Implements(reflect.TypeFor[interface {
		Name() string
		Synced() <-chan struct{}
		WaitUntilSynced(stop <-chan struct{}) bool
	}]())
}
