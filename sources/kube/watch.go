package kube

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// Watch selects and trims what one informer watches. The zero value
// watches every object of the resource in every namespace.
type Watch struct {
	// Namespace limits the watch to one namespace; "" means all. Ignored
	// for cluster-scoped resources.
	Namespace string
	// LabelSelector and FieldSelector filter on the server, in the syntax
	// of metav1.ListOptions ("app=web,tier!=db", "spec.nodeName=n1").
	LabelSelector string
	FieldSelector string
	// Transform changes each object before the informer caches it, for
	// example to drop fields meshd never reads. It may modify the object
	// it is given. For pods it is given the full Pod, and the informer
	// then caches the Pod's sources.PodInfo. Default: StripManagedFields.
	Transform cache.TransformFunc
}

func (w Watch) tweak(o *metav1.ListOptions) {
	if w.LabelSelector != "" {
		o.LabelSelector = w.LabelSelector
	}
	if w.FieldSelector != "" {
		o.FieldSelector = w.FieldSelector
	}
}

func (w Watch) transform() cache.TransformFunc {
	if w.Transform != nil {
		return w.Transform
	}
	return StripManagedFields
}

// StripManagedFields drops metadata.managedFields, which server-side apply
// keeps on every object and meshd never reads; it is often the largest part
// of an object.
func StripManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
