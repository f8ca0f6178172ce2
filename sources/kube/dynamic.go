package kube

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
)

// AddDynamic adds a collection of any resource served by the API server,
// such as a user's CRD, watched through the dynamic client. Objects are
// converted from unstructured to T with runtime.DefaultUnstructuredConverter
// before the informer caches them (so only T is held in memory); T may also
// be *unstructured.Unstructured to keep them as they are. An object that
// does not convert is left out, logged and counted (BadObjects).
//
// If the server does not serve gvr when Run starts, the collection is
// empty and synced until it does (see Run). AddDynamic must be called before Run; it panics if the
// source has no dynamic client.
func AddDynamic[T sources.Object](s *Source, gvr schema.GroupVersionResource, w Watch, opts ...krt.Option) krt.Collection[T] {
	if s.clients.Dynamic == nil {
		panic(fmt.Sprintf("kube: AddDynamic(%s) without a dynamic client", gvr))
	}
	transform := w.transform()
	convert := func(obj any) (any, error) {
		obj, err := transform(obj)
		if err != nil {
			return nil, err
		}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		var zero T
		if _, keep := any(zero).(*unstructured.Unstructured); keep {
			return u, nil
		}
		t := newObject[T]()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, t); err != nil {
			// Cache the object as it is: the handler counts and drops it.
			// Failing the transform would stall the informer's relist.
			return u, nil
		}
		return t, nil
	}
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(s.clients.Dynamic, 0, w.Namespace, w.tweak)
	informer := factory.ForResource(gvr).Informer()
	if err := informer.SetTransform(convert); err != nil {
		panic(fmt.Sprintf("kube: AddDynamic(%s): %v", gvr, err))
	}
	name := s.opts.name + "/" + gvr.Resource
	if gvr.Group != "" {
		name += "." + gvr.Group
	}
	return newFeed[T](s, name, gvr, true, informer, factory.Start, factory.Shutdown, opts...).static
}

// newObject returns a new zero T, where T is a pointer type.
func newObject[T sources.Object]() T {
	var zero T
	return reflect.New(reflect.TypeOf(zero).Elem()).Interface().(T)
}
