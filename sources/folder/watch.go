package folder

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"

	"github.com/meshd/meshd/internal/debounce"
	"github.com/meshd/meshd/sources/internal/fswatch"
)

// configMapData is the symlink a Kubernetes ConfigMap volume swaps
// atomically to publish new contents; the visible files link through it.
const configMapData = "..data"

// watch loads the directory, then applies its changes until ctx ends.
// Watches are added before the load so that no change is missed.
func (s *Source) watch(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching %s: %w", s.dir, err)
	}
	defer w.Close()
	if err := s.addWatches(w, "."); err != nil {
		return err
	}
	if err := s.Load(); err != nil {
		return err
	}

	// Wait for a quiet period, but not more than ten of them after the
	// first event, so a file rewritten continuously is still picked up.
	pending := map[string]bool{}
	return fswatch.Run(ctx, w, debounce.Policy{Quiet: s.opts.debounce, MaxDelay: 10 * s.opts.debounce}, fswatch.Handler{
		Event: func(ev fsnotify.Event) bool {
			rel, ok := s.relative(ev.Name)
			if ok {
				pending[rel] = true
			}
			return ok
		},
		Error: func(err error) bool {
			lost := s.watchError(err)
			if lost {
				// Events were lost: look at everything again.
				pending["."] = true
			}
			return lost
		},
		Flush: func() {
			s.sync(w, pending)
			pending = map[string]bool{}
		},
	})
}

// watchError counts and logs a watcher error, and reports whether events
// were lost to it.
func (s *Source) watchError(err error) bool {
	s.mu.Lock()
	s.stats.WatchErrors++
	s.mu.Unlock()
	s.opts.logger.Error("file watcher error", "dir", s.dir, "err", err)
	return errors.Is(err, fsnotify.ErrEventOverflow)
}

// sync applies the changes behind a set of changed paths.
func (s *Source) sync(w *fsnotify.Watcher, changed map[string]bool) {
	var files, dirs []string
	for p := range changed {
		base := path.Base(p)
		switch {
		case base == configMapData:
			// A ConfigMap volume swapped its contents: every visible file
			// of that directory may have changed without an event.
			dirs = append(dirs, path.Dir(p))
		case strings.HasPrefix(base, ".") && p != ".":
			// Hidden: editors' temporary files, the ConfigMap volume's
			// timestamped directories. Their effect shows up elsewhere.
		default:
			if info, err := fs.Stat(s.fsys, p); err == nil && info.IsDir() {
				// A new or renamed-in directory: watch it and read it all.
				if err := s.addWatches(w, p); err != nil {
					s.opts.logger.Error("watching new directory", "err", err)
				}
				dirs = append(dirs, p)
				continue
			}
			files = append(files, p)
		}
	}
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	if err := s.refreshLocked(files, dirs); err != nil {
		s.opts.logger.Error("reloading manifests", "dir", s.dir, "err", err)
	}
}

// addWatches watches dir (within fsys) and every non-hidden directory
// under it.
func (s *Source) addWatches(w *fsnotify.Watcher, dir string) error {
	return fs.WalkDir(s.fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return fmt.Errorf("watching %s: %w", s.displayPath(p), err)
			}
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			return fs.SkipDir
		}
		if err := w.Add(s.displayPath(p)); err != nil {
			return fmt.Errorf("watching %s: %w", s.displayPath(p), err)
		}
		return nil
	})
}

// relative turns a watcher path into a path within fsys.
func (s *Source) relative(name string) (string, bool) {
	rel, err := filepath.Rel(s.dir, name)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}
