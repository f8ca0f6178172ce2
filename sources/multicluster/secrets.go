package multicluster

import (
	"context"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// WatchSecrets applies to r the clusters of every Secret in namespace
// labelled LabelSecret=true, as they are added, changed and deleted,
// until ctx ends; it returns once its informer has stopped. Each Secret
// is an origin of its own, "secret <namespace>/<name>". A Secret's bad
// entries are logged and shown in its clusters' status; its good ones
// are used.
func WatchSecrets(ctx context.Context, client kubernetes.Interface, namespace string, r *Remotes, log *slog.Logger) error {
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = LabelSecret + "=true" }))
	informer := factory.Core().V1().Secrets().Informer()
	apply := func(obj any) {
		s, ok := obj.(*corev1.Secret)
		if !ok {
			return
		}
		clusters, err := ClustersOfSecret(s)
		if err != nil {
			log.Warn("remote cluster secret has bad entries; using the others", "err", err)
		}
		r.Apply(secretOrigin(s.Namespace, s.Name), clusters, err)
	}
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    apply,
		UpdateFunc: func(_, obj any) { apply(obj) },
		DeleteFunc: func(obj any) {
			switch o := obj.(type) {
			case *corev1.Secret:
				r.Apply(secretOrigin(o.Namespace, o.Name), nil, nil)
			case cache.DeletedFinalStateUnknown:
				// A missed delete, noticed on a relist: the key is
				// "namespace/name", as the origin has it.
				r.Apply("secret "+o.Key, nil, nil)
			}
		},
	})
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	<-ctx.Done()
	factory.Shutdown()
	return nil
}

func secretOrigin(namespace, name string) string { return "secret " + namespace + "/" + name }
