package krt

import (
	"context"
	"time"
)

// inlineBudget is how long an inline delivery of batches may take before
// its handler is moved to its own goroutine: a millisecond, and 5 µs more
// per event, enough for a handler that marks, counts or signals, however
// large its batch, and shorter than a wait.
func inlineBudget[T any](batches []Batch[T]) time.Duration {
	budget := time.Millisecond
	for _, b := range batches {
		budget += time.Duration(len(b.Events)) * 5 * time.Microsecond
	}
	return budget
}

// Inline delivers the handler's batches in the goroutine that committed
// them, just after the commit is published and the graph's locks are
// released, instead of on the handler's own goroutine: a batch reaches
// the handler without a thread hand-off, and a Set returns after its
// inline handlers have seen its events. Order and one-at-a-time delivery
// are as without it; batches still wait for Graph.Run.
//
// It is for handlers that return at once: mark something dirty, count,
// signal a channel that cannot fill. The writer waits while the handler
// runs, so a handler that blocks holds its writer (never the graph: the
// locks are released), and one that waits for the graph (Graph.Flush, a
// WaitVersion) may wait for the very writer it runs on, queued writes'
// included. A delivery that takes longer than a millisecond
// (and 5 µs per event) moves the handler to its own goroutine for good,
// with a warning in the graph's log. A handler may write to the graph or unregister itself; its
// own write's batch follows once it returns.
func Inline() RegisterOption { return func(o *registerOptions) { o.inline = true } }

// inlineDrainer is a handler the committer delivers to.
type inlineDrainer interface{ drainInline() }

// drainInline delivers h's queue in the calling goroutine, unless Run is
// not running (its goroutine delivers at start) or another goroutine is
// delivering (it looks at the queue again before it stops).
func (h *handler[T]) drainInline() {
	if !h.inline.Load() {
		h.wakeUp()
		return
	}
	ctx := h.runCtx.Load()
	if ctx == nil {
		return
	}
	h.drain(*ctx, true)
}

// attach records the Run h's goroutine serves, before it starts, so that
// a commit right after Run began delivers inline.
func (h *handler[T]) attach(ctx *context.Context) { h.runCtx.Store(ctx) }

// detach forgets ctx's Run, unless a later Run has attached already.
func (h *handler[T]) detach(ctx *context.Context) { h.runCtx.CompareAndSwap(ctx, nil) }

// demote moves h to its own goroutine after a delivery that took took.
func (h *handler[T]) demote(took, budget time.Duration) {
	if h.inline.Swap(false) {
		h.s.g.log.Warn("krt: an inline handler took too long; it now runs on its own goroutine",
			"collection", h.s.name, "took", took, "budget", budget)
	}
	h.wakeUp()
}

// deliverInline runs the inline deliveries the commits under the write
// lock listed; the caller has just released the lock.
func deliverInline(pending []inlineDrainer) {
	for _, h := range pending {
		h.drainInline()
	}
}
