package sources

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/meshd/meshd/krt"
)

// Object is a pointer to a Kubernetes API object, such as *corev1.Service,
// or to a slim one such as *PodInfo.
type Object interface {
	metav1.Object
	runtime.Object
}

// Key returns the krt key of a Kubernetes object: "namespace/name", or
// "name" for a cluster-scoped object.
func Key[T metav1.Object](o T) string {
	if ns := o.GetNamespace(); ns != "" {
		return ns + "/" + o.GetName()
	}
	return o.GetName()
}

// AnnotationCluster is the annotation naming the cluster an object was
// read from, set by a source of one of several clusters (kube.WithCluster)
// before the object is cached. Objects of the local cluster carry none.
const AnnotationCluster = "meshd.io/cluster"

// ClusterOf returns the cluster o was read from (AnnotationCluster), or ""
// for the local cluster.
func ClusterOf(o metav1.Object) string { return o.GetAnnotations()[AnnotationCluster] }

// ClusterKey returns the key of o among the objects of every cluster:
// "cluster/namespace/name" (or "cluster/name" when cluster-scoped) for an
// object of a remote cluster, Key for one of the local cluster. Objects
// whose names repeat across clusters, such as Pods, are keyed so.
func ClusterKey[T metav1.Object](o T) string {
	if c := ClusterOf(o); c != "" {
		return c + "/" + Key(o)
	}
	return Key(o)
}

// Equal reports whether a and b hold the same object. Two objects that both
// carry a ResourceVersion are equal exactly when the versions are (the API
// server changes the version on every write, and the version is part of
// the object, so comparing the rest could not make them equal); otherwise
// the objects are compared with equality.Semantic.DeepEqual.
func Equal[T Object](a, b T) bool {
	if any(a) == any(b) {
		return true
	}
	if ra, rb := a.GetResourceVersion(), b.GetResourceVersion(); ra != "" && rb != "" {
		return ra == rb
	}
	return equality.Semantic.DeepEqual(a, b)
}

// CollectionOptions returns the krt options every input collection of T
// uses: the given name, Key, Equal, and for Services the Service's selector
// (so krt.FilterSelects finds the Services selecting a Pod). Namespace and
// labels come from the object's own GetNamespace and GetLabels.
func CollectionOptions[T Object](name string, extra ...krt.Option) []krt.Option {
	opts := []krt.Option{
		krt.WithName(name),
		krt.WithKey(Key[T]),
		krt.WithEquals(Equal[T]),
	}
	var zero T
	if _, ok := any(zero).(*corev1.Service); ok {
		opts = append(opts, krt.WithSelector(func(o T) map[string]string {
			return any(o).(*corev1.Service).Spec.Selector
		}))
	}
	return append(opts, extra...)
}
