package fswatch_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/meshd/meshd/internal/debounce"
	"github.com/meshd/meshd/sources/internal/fswatch"
)

// watchDir returns a watcher of a fresh directory, and the directory.
func watchDir(t *testing.T) (*fsnotify.Watcher, string) {
	t.Helper()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	dir := t.TempDir()
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
	return w, dir
}

// TestRunBatches writes several files in a burst: the events of the
// accepted ones come as one batch; a file the handler rejects makes none.
func TestRunBatches(t *testing.T) {
	w, dir := watchDir(t)
	ctx, cancel := context.WithCancel(t.Context())
	flushes := make(chan []string, 10)
	var pending []string
	done := make(chan error, 1)
	go func() {
		done <- fswatch.Run(ctx, w, debounce.Policy{Quiet: 50 * time.Millisecond, MaxDelay: time.Second}, fswatch.Handler{
			Event: func(ev fsnotify.Event) bool {
				name := filepath.Base(ev.Name)
				if name == ".hidden" {
					return false
				}
				pending = append(pending, name)
				return true
			},
			Flush: func() {
				flushes <- pending
				pending = nil
			},
		})
	}()
	for _, name := range []string{"a.yaml", "b.yaml", "a.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case got := <-flushes:
		if !slices.Contains(got, "a.yaml") || !slices.Contains(got, "b.yaml") {
			t.Errorf("batch %v, want a.yaml and b.yaml", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no batch within 10s")
	}
	if err := os.WriteFile(filepath.Join(dir, ".hidden"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-flushes:
		t.Errorf("a rejected event made a batch: %v", got)
	case <-time.After(300 * time.Millisecond):
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after ctx ended = %v, want nil", err)
	}
}

// TestRunClosed: a watcher closed under Run ends it with ErrClosed.
func TestRunClosed(t *testing.T) {
	w, _ := watchDir(t)
	done := make(chan error, 1)
	go func() {
		done <- fswatch.Run(t.Context(), w, debounce.Policy{Quiet: time.Millisecond}, fswatch.Handler{Flush: func() {}})
	}()
	w.Close()
	select {
	case err := <-done:
		if !errors.Is(err, fswatch.ErrClosed) {
			t.Errorf("Run = %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return within 10s of Close")
	}
}
