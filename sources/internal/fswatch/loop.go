package fswatch

import (
	"context"
	"errors"

	"github.com/fsnotify/fsnotify"

	"github.com/meshd/meshd/internal/debounce"
)

// ErrClosed is returned by Run when the watcher closed before ctx ended.
var ErrClosed = errors.New("file watcher closed")

// Handler is what Run calls, on its own goroutine.
type Handler struct {
	// Event reports whether ev belongs to a batch; nil accepts every event.
	Event func(ev fsnotify.Event) bool
	// Error handles a watcher error and reports whether a batch must
	// follow (events may have been lost to it); nil ignores errors.
	Error func(err error) bool
	// Flush handles a batch that is due.
	Flush func()
}

// Run reads w until ctx ends, then returns nil, or until w closes, then
// returns ErrClosed. Events and errors that h accepts open or extend a
// batch, which h.Flush handles once policy says it is due.
func Run(ctx context.Context, w *fsnotify.Watcher, policy debounce.Policy, h Handler) error {
	batch := debounce.NewTimer(policy)
	defer batch.Done()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return ErrClosed
			}
			if h.Event == nil || h.Event(ev) {
				batch.Add()
			}
		case err, ok := <-w.Errors:
			if !ok {
				return ErrClosed
			}
			if h.Error != nil && h.Error(err) {
				batch.Add()
			}
		case <-batch.C():
			batch.Done()
			h.Flush()
		}
	}
}
