// Package fswatch is the one watch loop of meshd's file sources (the
// manifest folder and the mesh config file): it turns an fsnotify
// watcher's events and errors into debounced batches.
//
// The caller owns the watcher: it creates it, adds the paths to watch and
// closes it after Run returns. Run owns the loop:
//
//  1. an event or error the Handler accepts arms the debounce timer;
//  2. once the policy says the batch is due, Flush runs;
//  3. Run returns nil when ctx ends, or an error if the watcher closes.
//
// Every Handler function runs on Run's goroutine, so state they share
// (the paths pending in a batch, say) needs no lock.
package fswatch
