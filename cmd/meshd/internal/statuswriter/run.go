package statuswriter

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/client-go/util/workqueue"

	"github.com/meshd/meshd/krt"
)

// Run writes status until ctx ends: once the collections have synced, it
// reconciles every object that has a computed status or that the writer
// has anything to do with, then each object that changes. It returns once
// nothing of it runs any more; it may be called again for a later term,
// but not concurrently (a second call waits for the first to return).
func (w *Writer) Run(ctx context.Context) {
	w.runMu.Lock()
	defer w.runMu.Unlock()
	var synced []interface{ Synced() <-chan struct{} }
	for _, t := range w.triggers {
		synced = append(synced, t)
	}
	for _, k := range w.kinds {
		synced = append(synced, k)
	}
	// Status computed before the inputs are complete could be wrong (an
	// object not listed yet reads as missing): wait.
	if krt.WaitSynced(ctx, synced...) != nil {
		return
	}

	q := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](retryBase, retryMax),
		workqueue.TypedRateLimitingQueueConfig[string]{})
	regs := w.registerAll(func(key string) { q.AddAfter(key, coalesceDelay) })
	w.qmu.Lock()
	w.queue = q
	w.qmu.Unlock()

	done := make(chan struct{})
	go func() {
		defer close(done)
		for w.processNext(ctx, q) {
		}
	}()
	<-ctx.Done()
	for _, r := range regs {
		r.Unregister()
	}
	// A batch being delivered may still add: the shut down queue ignores
	// it. The worker skips what is left in the queue.
	q.ShutDown()
	<-done
	w.qmu.Lock()
	w.queue = nil
	w.qmu.Unlock()
}

// processNext reconciles the next queued object; false once the queue is
// shut down and empty.
func (w *Writer) processNext(ctx context.Context, q workqueue.TypedRateLimitingInterface[string]) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(key)
	if ctx.Err() != nil {
		// The term is over; the next one replays everything anyway.
		return true
	}
	out, err := w.reconcile(ctx, key)
	switch {
	case err == nil:
		q.Forget(key)
		w.failed(key, nil)
		w.count(out)
	case ctx.Err() != nil:
		// Cut short by the end of the term: not a failure.
	default:
		w.handle(q, key, err)
	}
	return true
}

// reconcile brings the status of the object with key "Kind/namespace/name"
// in line with what its kind wants.
func (w *Writer) reconcile(ctx context.Context, key string) (Outcome, error) {
	parts := strings.SplitN(key, "/", 3)
	if len(parts) != 3 {
		return 0, fmt.Errorf("malformed status key %q", key)
	}
	k, ok := w.kinds[parts[0]]
	if !ok {
		// A kind without a collection is not written to.
		return NotFound, nil
	}
	return k.reconcile(ctx, w, parts[1], parts[2])
}
