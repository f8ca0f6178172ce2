package folder

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
)

// kind is a kind that has a collection: its documents are decoded into its
// Go type and written to its Static.
type kind struct {
	gvk        schema.GroupVersionKind
	namespaced bool
	validate   func(runtime.Object) error
	// convert turns a decoded, validated object into the one stored, such
	// as a Pod into its sources.PodInfo; nil stores the object itself.
	convert func(runtime.Object) runtime.Object
	// set and del write to the kind's collection within tx.
	set        func(tx *krt.Txn, objs []runtime.Object)
	del        func(tx *krt.Txn, keys []string)
	markSynced func()
}

// KindOption configures a kind added with AddKind.
type KindOption func(*kindOptions)

type kindOptions struct {
	clusterScoped bool
	validate      func(runtime.Object) error
	krtOpts       []krt.Option
}

// ClusterScoped declares the kind cluster-scoped: its objects have no
// namespace and their key is their name. Default: namespaced.
func ClusterScoped() KindOption { return func(o *kindOptions) { o.clusterScoped = true } }

// WithValidation adds a check run on every decoded object of the kind, after
// the generic checks (name, namespace). An error keeps the file's last good
// objects, as a parse error does.
func WithValidation[T sources.Object](check func(T) error) KindOption {
	return func(o *kindOptions) {
		o.validate = func(obj runtime.Object) error { return check(obj.(T)) }
	}
}

// WithCollectionOptions adds krt options to the kind's collection, after
// sources.CollectionOptions.
func WithCollectionOptions(opts ...krt.Option) KindOption {
	return func(o *kindOptions) { o.krtOpts = append(o.krtOpts, opts...) }
}

// AddKind gives documents of gvk a typed collection of T, such as a user's
// CRD type, and returns it. T must be a pointer to a struct that embeds
// TypeMeta and ObjectMeta, like generated API types; it is registered in the
// source's scheme under gvk. AddKind must be called before Load or Run, and
// panics on a second registration of gvk, or when called later.
func AddKind[T sources.Object](s *Source, gvk schema.GroupVersionKind, opts ...KindOption) krt.Collection[T] {
	return addKindAs[T, T](s, gvk, nil, opts...)
}

// addKindAs is AddKind for a kind whose documents decode into D, are
// validated as D, and are stored as convert makes them; a nil convert
// stores the D itself, which must then be a T.
func addKindAs[D, T sources.Object](s *Source, gvk schema.GroupVersionKind, convert func(D) T, opts ...KindOption) krt.Collection[T] {
	var o kindOptions
	for _, opt := range opts {
		opt(&o)
	}
	name := "folder/" + gvk.Kind
	if gvk.Group != "" {
		name += "." + gvk.Group
	}
	static := krt.NewStatic[T](s.g, sources.CollectionOptions[T](name, append([]krt.Option{krt.WithUnsynced()}, o.krtOpts...)...)...)
	k := &kind{
		gvk:        gvk,
		namespaced: !o.clusterScoped,
		validate:   o.validate,
		set: func(tx *krt.Txn, objs []runtime.Object) {
			items := make([]T, len(objs))
			for i, obj := range objs {
				items[i] = obj.(T)
			}
			static.In(tx).Set(items...)
		},
		del:        func(tx *krt.Txn, keys []string) { static.In(tx).Delete(keys...) },
		markSynced: static.MarkSynced,
	}
	if convert != nil {
		k.convert = func(obj runtime.Object) runtime.Object { return convert(obj.(D)) }
	}
	s.addKind(k, newObject[D])
	return static
}

// addKind registers k; newObj makes an empty object of its Go type.
func (s *Source) addKind(k *kind, newObj func() runtime.Object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loaded {
		panic(fmt.Sprintf("folder: AddKind(%s) after Load", k.gvk))
	}
	if _, dup := s.kinds[k.gvk]; dup {
		panic(fmt.Sprintf("folder: AddKind(%s) called twice", k.gvk))
	}
	if !s.scheme.Recognizes(k.gvk) {
		s.scheme.AddKnownTypeWithName(k.gvk, newObj())
	}
	s.kinds[k.gvk] = k
}

// newObject returns a new zero T, where T is a pointer type.
func newObject[T sources.Object]() runtime.Object {
	var zero T
	return reflect.New(reflect.TypeOf(zero).Elem()).Interface().(runtime.Object)
}
