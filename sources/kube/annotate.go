package kube

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/meshd/meshd/sources"
)

// annotateCluster returns a transform that runs next and then annotates
// the object with its cluster (sources.AnnotationCluster). The object is
// the informer's own fresh copy, not yet cached, so it may be changed.
func annotateCluster(next cache.TransformFunc, cluster string) cache.TransformFunc {
	return func(obj any) (any, error) {
		obj, err := next(obj)
		if err != nil {
			return nil, err
		}
		m, ok := obj.(metav1.Object)
		if !ok {
			return obj, nil // a tombstone: its object was annotated when cached
		}
		a := m.GetAnnotations()
		if a[sources.AnnotationCluster] == cluster {
			return obj, nil
		}
		out := make(map[string]string, len(a)+1)
		for k, v := range a {
			out[k] = v
		}
		out[sources.AnnotationCluster] = cluster
		m.SetAnnotations(out)
		return obj, nil
	}
}
