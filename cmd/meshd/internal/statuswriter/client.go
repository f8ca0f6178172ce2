package statuswriter

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StatusClient is the part of a generated client-go client of one kind,
// in one namespace, that a Kind reads and writes through.
type StatusClient[T any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	UpdateStatus(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// Through returns the Get and Update of a Kind that reads objects, and
// writes their status subresource, through the client that client
// returns for a namespace.
func Through[T metav1.Object](client func(ns string) StatusClient[T]) (
	get func(ctx context.Context, ns, name string) (T, error), update func(ctx context.Context, obj T) error) {
	get = func(ctx context.Context, ns, name string) (T, error) {
		return client(ns).Get(ctx, name, metav1.GetOptions{})
	}
	update = func(ctx context.Context, obj T) error {
		_, err := client(obj.GetNamespace()).UpdateStatus(ctx, obj, metav1.UpdateOptions{})
		return err
	}
	return get, update
}
