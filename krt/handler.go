package krt

import (
	"context"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Registration is a handler added with Collection.Register.
type Registration struct {
	unregister  func()
	synced      func() bool
	waitVersion func(ctx context.Context, v uint64) error
}

// Unregister stops delivery to the handler. A batch being delivered
// completes; no later one is delivered. It is safe to call more than once
// and from inside the handler.
func (r *Registration) Unregister() { r.unregister() }

// HasSynced reports whether the collection has synced and the handler has
// been given the replayed state, if it asked for it.
func (r *Registration) HasSynced() bool { return r.synced() }

// handlerRunner is the type-erased handler the graph starts goroutines for.
// attach and detach bracket a Run, for inline delivery.
type handlerRunner interface {
	run(ctx context.Context)
	attach(ctx *context.Context)
	detach(ctx *context.Context)
}

type handler[T any] struct {
	s   *store[T]
	fn  func(Batch[T])
	reg *Registration

	mu            sync.Mutex
	queue         []Batch[T]
	inflight      []Batch[T] // taken from queue by take; inflight[next:] not delivered yet
	next          int
	spare         []Batch[T]    // a delivered inflight, emptied: the next queue's array
	progress      chan struct{} // closed when a batch has been delivered; made by waiters
	pendingReplay bool
	delivering    bool // a goroutine holds the turn to deliver (take to release)
	wake          chan struct{}
	stopped       chan struct{}
	stopOnce      sync.Once
	replayed      atomic.Bool
	inline        atomic.Bool                     // delivered by the committer (Inline)
	runCtx        atomic.Pointer[context.Context] // the Run the goroutine serves; nil while none
}

func newHandler[T any](s *store[T], fn func(Batch[T])) *handler[T] {
	h := &handler[T]{s: s, fn: fn, wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	h.reg = &Registration{
		unregister: func() {
			h.stopOnce.Do(func() {
				close(h.stopped)
				s.unregister(h)
			})
		},
		synced:      func() bool { return s.HasSynced() && h.replayed.Load() },
		waitVersion: h.waitVersion,
	}
	return h
}

// enqueue appends b; it never blocks, so a slow handler delays no one.
// An inline handler is not woken: the commit lists it for delivery once
// the write lock is released (inline.go). The caller holds the write lock.
func (h *handler[T]) enqueue(b Batch[T]) {
	h.mu.Lock()
	h.queue = append(h.queue, b)
	h.mu.Unlock()
	if h.inline.Load() {
		h.s.g.inlinePending = append(h.s.g.inlinePending, h)
		return
	}
	h.wakeUp()
}

// wakeUp makes the handler's goroutine look at its queue.
func (h *handler[T]) wakeUp() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

func (h *handler[T]) run(ctx context.Context) {
	for {
		if !h.drain(ctx, false) {
			return
		}
		select {
		case <-ctx.Done():
			// Keep undelivered batches for the next Run.
			return
		case <-h.stopped:
			return
		case <-h.wake:
		}
	}
}

// drain delivers what is queued until nothing is, and returns whether
// the handler is still registered and ctx alive. Only one goroutine
// delivers at a time: a caller that finds another delivering leaves the
// queue to it, which looks again before it stops. Delivering inline,
// drain stops after batches that took longer than their budget, and
// moves the handler to its goroutine.
func (h *handler[T]) drain(ctx context.Context, inline bool) bool {
	for {
		batches, replay, ok := h.take()
		if !ok {
			return true
		}
		var began time.Time
		if inline {
			began = time.Now()
		}
		alive := h.deliverAll(ctx, batches, replay)
		h.release()
		if !alive {
			return false
		}
		if inline {
			if took, budget := time.Since(began), inlineBudget(batches); took > budget {
				h.demote(took, budget)
				return true
			}
		}
	}
}

// take moves the queue in flight for the caller to deliver; ok is false
// when another goroutine is delivering or nothing is queued.
func (h *handler[T]) take() (batches []Batch[T], replay, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.delivering || len(h.queue) == 0 {
		if !h.delivering && !h.pendingReplay {
			h.replayed.Store(true)
		}
		return nil, false, false
	}
	batches = h.queue
	h.queue, h.spare = h.spare, nil
	h.inflight, h.next = batches, 0
	replay, h.pendingReplay = h.pendingReplay, false
	h.delivering = true
	return batches, replay, true
}

// release ends the caller's turn to deliver.
func (h *handler[T]) release() {
	h.mu.Lock()
	h.delivering = false
	h.mu.Unlock()
}

// deliverAll hands batches to the handler in order; it returns false,
// keeping the rest for the next Run, when ctx ends or the handler is
// unregistered on the way.
func (h *handler[T]) deliverAll(ctx context.Context, batches []Batch[T], replay bool) bool {
	for i, b := range batches {
		select {
		case <-h.stopped:
			return false
		case <-ctx.Done():
			h.requeue(batches[i:], replay && i == 0)
			return false
		default:
		}
		h.deliver(b)
		h.delivered()
		if i == 0 && replay {
			h.replayed.Store(true)
		}
	}
	return true
}

// requeue puts undelivered batches back in front of the queue, for the
// next Run.
func (h *handler[T]) requeue(rest []Batch[T], replay bool) {
	h.mu.Lock()
	h.queue = append(append([]Batch[T](nil), rest...), h.queue...)
	h.inflight, h.next = nil, 0
	h.pendingReplay = h.pendingReplay || replay
	h.mu.Unlock()
}

func (h *handler[T]) deliver(b Batch[T]) {
	defer func() {
		if r := recover(); r != nil {
			stack := string(debug.Stack())
			h.s.recordError("", &panicError{value: r, stack: stack}, stack)
		}
	}()
	h.fn(b)
}

// makeEvents returns room for the events of n changes and the values
// they point to. A single change, the common case, takes one allocation
// for both.
func makeEvents[T any](n int) ([]Event[T], []T) {
	if n == 1 {
		one := new(struct {
			events [1]Event[T]
			vals   [2]T
		})
		return one.events[:0], one.vals[:0]
	}
	events, vals := make([]Event[T], 0, n), make([]T, 0, 2*n)
	touchFrom(events, 0)
	touchFrom(vals, 0)
	return events, vals
}

// clearedScratch returns recs emptied for reuse by the next finish, or
// nil when it has grown too large to keep.
func clearedScratch(recs []EventRecord) []EventRecord {
	if cap(recs) > 64 {
		return nil
	}
	clear(recs)
	return recs[:0]
}
