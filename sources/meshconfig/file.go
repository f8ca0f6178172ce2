package meshconfig

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fsnotify/fsnotify"

	"github.com/meshd/meshd/internal/debounce"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources/internal/fswatch"
)

// File is a mesh config read from a YAML file, watched for changes by Run.
// A file that is missing, unreadable or invalid keeps the last good config
// (Default before the first good read) and is reported through Status and
// the log.
type File struct {
	path   string
	opts   options
	config krt.StaticSingleton[MeshConfig]
	status tracker
}

// NewFile returns a source for the file at path. Its singleton is unsynced
// until the first Load (which Run does). It starts nothing.
func NewFile(g *krt.Graph, path string, opts ...Option) *File {
	o := buildOptions(opts)
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	f := &File{
		path:   path,
		opts:   o,
		config: krt.NewStaticSingleton[MeshConfig](g, nil, krt.WithName(o.name), krt.WithUnsynced()),
		status: tracker{logger: o.logger, status: Status{Source: path}},
	}
	return f
}

// Config returns the singleton holding the config in use.
func (f *File) Config() krt.Singleton[MeshConfig] { return f.config }

// Status returns where the config comes from and whether the last read was
// accepted.
func (f *File) Status() Status { return f.status.get() }

// Load reads the file once and stores the config if it is valid, or, on
// the first call, Default if it is not; the singleton is synced afterwards
// either way. It returns why the file was rejected, if it was.
func (f *File) Load() error {
	data, err := os.ReadFile(f.path)
	if err == nil {
		var c MeshConfig
		if c, err = Parse(data); err == nil {
			f.config.Set(c)
			f.status.accepted(c)
			f.config.MarkSynced()
			return nil
		}
	}
	if pe := (*os.PathError)(nil); !errors.As(err, &pe) {
		// A read error names the path already; a parse error does not.
		err = fmt.Errorf("%s: %w", f.path, err)
	}
	f.status.rejected(err)
	if _, ok := f.config.Value(); !ok {
		f.config.Set(Default())
	}
	f.config.MarkSynced()
	return err
}

// Run loads the file and reloads it whenever it changes, until ctx ends;
// it returns nil then, or the error that stopped the watch. The file's
// directory is watched, so atomic saves (rename over the file) and the
// "..data" symlink swap of a Kubernetes ConfigMap volume are seen.
// Rejected contents are reported, not returned.
func (f *File) Run(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching %s: %w", f.path, err)
	}
	defer w.Close()
	dir, base := filepath.Split(f.path)
	if err := w.Add(dir); err != nil {
		return fmt.Errorf("watching %s: %w", dir, err)
	}
	_ = f.Load()

	return fswatch.Run(ctx, w, debounce.Policy{Quiet: f.opts.debounce, MaxDelay: 10 * f.opts.debounce}, fswatch.Handler{
		Event: func(ev fsnotify.Event) bool {
			name := filepath.Base(ev.Name)
			return name == base || name == "..data"
		},
		Error: func(err error) bool {
			f.opts.logger.Error("mesh config watcher error", "path", f.path, "err", err)
			return true // events may be lost: read again
		},
		Flush: func() { _ = f.Load() },
	})
}
