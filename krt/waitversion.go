package krt

import (
	"context"
	"sync/atomic"
)

// WaitVersion blocks until the handler has returned from every batch of a
// transaction that committed at version v or earlier, and returns nil; it
// returns ctx's error if ctx ends first, and ErrUnregistered once the
// handler is unregistered. Pass the version a write returned (Static.Set,
// Graph.Update) to wait for that write's events, with no sleeps and no
// polling: the way tests and embedders learn that a handler has caught up.
//
// A transaction that did not change the handler's collection gives it no
// batch, so there is nothing to wait for at that version. For a version
// not committed yet, WaitVersion also waits for the commit. Batches are
// delivered only while Graph.Run runs. WaitVersion must not be called from
// the handler itself, which would wait for its own return.
func (r *Registration) WaitVersion(ctx context.Context, v uint64) error {
	return r.waitVersion(ctx, v)
}

func (h *handler[T]) waitVersion(ctx context.Context, v uint64) error {
	for {
		commit := h.s.g.commits.wait() // taken before the version is read, so no commit is missed
		if h.s.g.Version() < v {
			if err := waitFor(ctx, h.stopped, commit); err != nil {
				return err
			}
			continue
		}
		progress := h.progressUnless(v)
		if progress == nil {
			return nil
		}
		if err := waitFor(ctx, h.stopped, progress); err != nil {
			return err
		}
	}
}

// progressUnless returns nil when no batch of version v or earlier is
// waiting for delivery, else a channel closed on the next delivery.
func (h *handler[T]) progressUnless(v uint64) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	pending, has := uint64(0), false
	switch {
	case h.next < len(h.inflight):
		pending, has = h.inflight[h.next].Version, true
	case len(h.queue) > 0:
		pending, has = h.queue[0].Version, true
	}
	if !has || pending > v {
		return nil
	}
	if h.progress == nil {
		h.progress = make(chan struct{})
	}
	return h.progress
}

// delivered records that the next in-flight batch has been handled and
// wakes WaitVersion callers.
func (h *handler[T]) delivered() {
	h.mu.Lock()
	h.next++
	if h.next == len(h.inflight) {
		// Keep no delivered batch alive, but keep a small array for the
		// next queue: one allocation less per batch.
		if clear(h.inflight); cap(h.inflight) <= 64 {
			h.spare = h.inflight[:0]
		}
		h.inflight, h.next = nil, 0
	}
	if h.progress != nil {
		close(h.progress)
		h.progress = nil
	}
	h.mu.Unlock()
}

func waitFor(ctx context.Context, stopped, ch <-chan struct{}) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-stopped:
		return ErrUnregistered
	case <-ch:
		return nil
	}
}

// versionSignal is a broadcast of "a version committed" that costs a
// commit one atomic load while nobody waits.
type versionSignal struct {
	ch atomic.Pointer[chan struct{}]
}

// wait returns a channel closed by the next publish.
func (s *versionSignal) wait() <-chan struct{} {
	for {
		if p := s.ch.Load(); p != nil {
			return *p
		}
		c := make(chan struct{})
		if s.ch.CompareAndSwap(nil, &c) {
			return c
		}
	}
}

func (s *versionSignal) publish() {
	if s.ch.Load() == nil {
		return
	}
	if p := s.ch.Swap(nil); p != nil {
		close(*p)
	}
}
