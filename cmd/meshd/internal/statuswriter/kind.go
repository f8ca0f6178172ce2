package statuswriter

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/meshd/meshd/krt"
)

// Target is a kind of object a Writer writes the status of: a *Kind.
type Target interface {
	name() string
	Synced() <-chan struct{}
	register(add func(key string)) *krt.Registration
	reconcile(ctx context.Context, w *Writer, ns, name string) (Outcome, error)
}

// Kind is one kind of object, with what the writer needs to know of it.
// Every field is required.
type Kind[T metav1.Object] struct {
	// Name is the kind, "HTTPRoute": the first part of its keys.
	Name string
	// Objects are the cluster's objects of the kind, keyed
	// "namespace/name" as the sources key them.
	Objects krt.Collection[T]
	// Relevant reports whether the writer has anything to do with an
	// object: it enqueues changes of only those.
	Relevant func(obj T) bool
	// Desired returns a copy of obj with the status it should have and
	// Write, or Unchanged or Stale (the status was computed from another
	// generation of obj) with nothing to write. It must not change obj.
	Desired func(obj T) (T, Outcome)
	// Get reads the object from the server; Update writes its status
	// through the status subresource.
	Get    func(ctx context.Context, ns, name string) (T, error)
	Update func(ctx context.Context, obj T) error
}

func (k *Kind[T]) name() string               { return k.Name }
func (k *Kind[T]) Synced() <-chan struct{}    { return k.Objects.Synced() }
func (k *Kind[T]) key(ns, name string) string { return k.Name + "/" + ns + "/" + name }
func (k *Kind[T]) relevant(e krt.Event[T]) bool {
	return (e.Old != nil && k.Relevant(*e.Old)) || (e.New != nil && k.Relevant(*e.New))
}

func (k *Kind[T]) register(add func(key string)) *krt.Registration {
	return k.Objects.Register(func(b krt.Batch[T]) {
		for _, e := range b.Events {
			if k.relevant(e) {
				add(k.Name + "/" + e.Key)
			}
		}
	}, krt.WithReplay())
}

// reconcile decides on the collection's copy, which is almost always
// current, and reads the server only after a conflict. Every write takes
// a token first; since waiting for one may take long, the decision is
// made again after the wait.
func (k *Kind[T]) reconcile(ctx context.Context, w *Writer, ns, name string) (Outcome, error) {
	var (
		out Outcome
		a   attempt
	)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var err error
		for out = 0; out == 0 && err == nil; {
			out, err = k.step(ctx, w, &a, ns, name)
		}
		return err
	})
	if apierrors.IsNotFound(err) {
		return NotFound, nil
	}
	return out, err
}

// attempt is what reconcile carries from one decision to the next.
type attempt struct {
	token    bool // a token is held for the next write
	conflict bool // the last write conflicted: read the server
	// cached is the resource version of the collection's copy the last
	// decision started from.
	cached string
}

// step makes one decision. It returns outcome 0 when it only took a
// token, so the caller decides again on fresh copies.
func (k *Kind[T]) step(ctx context.Context, w *Writer, a *attempt, ns, name string) (Outcome, error) {
	obj, out, err := k.current(ctx, w, a, ns, name)
	if out != 0 || err != nil {
		return out, err
	}
	want, out := k.Desired(obj)
	if out != Write {
		return out, nil
	}
	if !a.token {
		if err := w.limiter.Wait(ctx); err != nil {
			return 0, fmt.Errorf("waiting to write: %w", err)
		}
		a.token = true
		return 0, nil
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	a.token = false
	err = call(ctx, func(ctx context.Context) error { return k.Update(ctx, want) })
	if apierrors.IsConflict(err) {
		w.conflicts.Add(1)
		a.conflict = true
	}
	if err != nil {
		return 0, fmt.Errorf("updating status: %w", err)
	}
	w.superseded.wrote(k.key(ns, name), a.cached, want.GetResourceVersion())
	w.log.Debug("status written", "key", k.key(ns, name), "generation", obj.GetGeneration())
	return Written, nil
}

// current returns the object to decide on: the collection's copy, or the
// server's after a conflict. A nonzero outcome means there is nothing to
// write: the object is gone, not from a cluster, or caught between
// versions (a newer spec, or the collection not yet holding the writer's
// own last write).
func (k *Kind[T]) current(ctx context.Context, w *Writer, a *attempt, ns, name string) (T, Outcome, error) {
	key := k.key(ns, name)
	cached, ok := k.Objects.Get(ns + "/" + name)
	if !ok || cached.GetResourceVersion() == "" {
		// Not in the collection, or not from a cluster (a source
		// without resource versions): nothing to write to.
		w.superseded.forget(key)
		return cached, NotFound, nil
	}
	a.cached = cached.GetResourceVersion()
	if w.superseded.replaced(key, a.cached) {
		return cached, Stale, nil
	}
	if !a.conflict {
		return cached, 0, nil
	}
	var obj T
	err := call(ctx, func(ctx context.Context) (err error) {
		obj, err = k.Get(ctx, ns, name)
		return err
	})
	if err != nil {
		return obj, 0, fmt.Errorf("reading %s: %w", k.Name, err)
	}
	if obj.GetGeneration() != cached.GetGeneration() {
		// The server holds a newer spec; the collection delivers it
		// and its status soon.
		return obj, Stale, nil
	}
	return obj, 0, nil
}

// call runs one API call under requestTimeout.
func call(ctx context.Context, fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	return fn(ctx)
}

// Trigger is a collection whose changes ask for a reconciliation: the
// computed status. Make one with Keys.
type Trigger interface {
	Synced() <-chan struct{}
	register(add func(key string)) *krt.Registration
}

// Keys is a Trigger that enqueues prefix + the key of each changed item
// of c; prefix is "" when c's keys are "Kind/namespace/name" already.
func Keys[T any](c krt.Collection[T], prefix string) Trigger { return keys[T]{c, prefix} }

type keys[T any] struct {
	c      krt.Collection[T]
	prefix string
}

func (k keys[T]) Synced() <-chan struct{} { return k.c.Synced() }

func (k keys[T]) register(add func(key string)) *krt.Registration {
	return k.c.Register(func(b krt.Batch[T]) {
		for _, e := range b.Events {
			add(k.prefix + e.Key)
		}
	}, krt.WithReplay())
}
