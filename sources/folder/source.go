package folder

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	securityv1 "istio.io/client-go/pkg/apis/security/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
)

// Source loads manifests into krt collections. Create it with NewDir or
// NewFS, add kinds with AddKind, then call Load or Run.
type Source struct {
	g    *krt.Graph
	fsys fs.FS
	dir  string // the watched directory; "" for NewFS
	opts options

	inputs       sources.Inputs
	unstructured krt.Static[*unstructured.Unstructured]
	scheme       *kruntime.Scheme

	// loadMu serializes loads: only its holder changes st.
	loadMu sync.Mutex
	dec    *decoder

	mu               sync.Mutex // guards following
	kinds            map[schema.GroupVersionKind]*kind
	unstructuredKind *kind
	loaded           bool
	st               state
	stats            Stats
}

// Option configures a Source.
type Option func(*options)

type options struct {
	logger           *slog.Logger
	debounce         time.Duration
	strict           bool
	defaultNamespace string
	name             string
}

// WithLogger sets the logger problems and reloads are reported to.
// Default: discard.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithDebounce sets how long the watcher waits after a file event for more
// before reloading; a steady stream of events is applied at least every ten
// periods. Default: 100ms.
func WithDebounce(d time.Duration) Option { return func(o *options) { o.debounce = d } }

// WithStrict sets whether unknown or duplicate fields in a document are
// errors. Default: true.
func WithStrict(strict bool) Option { return func(o *options) { o.strict = strict } }

// WithDefaultNamespace sets the namespace given to namespaced objects that
// have none. Default: "default".
func WithDefaultNamespace(ns string) Option { return func(o *options) { o.defaultNamespace = ns } }

// WithName sets the prefix of the collections' names. Default: "folder".
func WithName(name string) Option { return func(o *options) { o.name = name } }

// NewDir returns a source for the directory dir, which Run watches. It
// starts no goroutine and reads nothing before Load or Run.
func NewDir(g *krt.Graph, dir string, opts ...Option) *Source {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	s := newSource(g, os.DirFS(dir), opts)
	s.dir = dir
	return s
}

// NewFS returns a source for fsys, such as an embed.FS. It is loaded once:
// Run loads it if needed and returns.
func NewFS(g *krt.Graph, fsys fs.FS, opts ...Option) *Source {
	return newSource(g, fsys, opts)
}

func newSource(g *krt.Graph, fsys fs.FS, opts []Option) *Source {
	o := options{logger: slog.New(slog.DiscardHandler), debounce: 100 * time.Millisecond, strict: true,
		defaultNamespace: "default", name: "folder"}
	for _, opt := range opts {
		opt(&o)
	}
	scheme := kruntime.NewScheme()
	// Both only register types; an error would be a programming error
	// in the generated code.
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), gatewayv1.Install(scheme)); err != nil {
		panic(fmt.Sprintf("folder: building scheme: %v", err))
	}
	s := &Source{
		g: g, fsys: fsys, opts: o, scheme: scheme,
		kinds: map[schema.GroupVersionKind]*kind{},
		st:    newState(),
	}
	s.unstructured = krt.NewStatic[*unstructured.Unstructured](g,
		krt.WithName(o.name+"/unstructured"), krt.WithUnsynced(),
		krt.WithKey(func(u *unstructured.Unstructured) string {
			return unstructuredKey(u.GroupVersionKind().GroupKind(), u)
		}),
		krt.WithEquals(sources.Equal[*unstructured.Unstructured]))
	s.unstructuredKind = &kind{
		set: func(tx *krt.Txn, objs []kruntime.Object) {
			items := make([]*unstructured.Unstructured, len(objs))
			for i, obj := range objs {
				items[i] = obj.(*unstructured.Unstructured)
			}
			s.unstructured.In(tx).Set(items...)
		},
		del:        func(tx *krt.Txn, keys []string) { s.unstructured.In(tx).Delete(keys...) },
		markSynced: s.unstructured.MarkSynced,
	}
	s.inputs = sources.Inputs{
		Services:       addBuiltin[*corev1.Service](s, corev1.SchemeGroupVersion.WithKind("Service"), true),
		Pods:           addKindAs(s, corev1.SchemeGroupVersion.WithKind("Pod"), sources.NewPodInfo),
		Namespaces:     addBuiltin[*corev1.Namespace](s, corev1.SchemeGroupVersion.WithKind("Namespace"), false),
		EndpointSlices: addBuiltin[*discoveryv1.EndpointSlice](s, discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice"), true),
		Nodes:          addBuiltin[*corev1.Node](s, corev1.SchemeGroupVersion.WithKind("Node"), false),
		ConfigMaps:     addBuiltin[*corev1.ConfigMap](s, corev1.SchemeGroupVersion.WithKind("ConfigMap"), true),
		HTTPRoutes:     addBuiltin[*gatewayv1.HTTPRoute](s, gatewayVersion.WithKind("HTTPRoute"), true),
		GRPCRoutes:     addBuiltin[*gatewayv1.GRPCRoute](s, gatewayVersion.WithKind("GRPCRoute"), true),

		PeerAuthentications: addBuiltin[*securityv1.PeerAuthentication](s,
			securityv1.SchemeGroupVersion.WithKind("PeerAuthentication"), true),
		AuthorizationPolicies: addBuiltin[*securityv1.AuthorizationPolicy](s,
			securityv1.SchemeGroupVersion.WithKind("AuthorizationPolicy"), true),
	}.Complete(g, o.name) // the mesh config, which no manifest holds
	return s
}

func addBuiltin[T sources.Object](s *Source, gvk schema.GroupVersionKind, namespaced bool) krt.Collection[T] {
	var opts []KindOption
	if !namespaced {
		opts = append(opts, ClusterScoped())
	}
	return AddKind[T](s, gvk, opts...)
}

// Inputs returns the source's collections. They are synced once the
// initial load has been applied; MeshConfig is empty.
func (s *Source) Inputs() sources.Inputs { return s.inputs }

// Unstructured returns the objects of kinds without a collection, keyed
// "Kind.group/namespace/name".
func (s *Source) Unstructured() krt.Collection[*unstructured.Unstructured] { return s.unstructured }

// Problems returns the current problems of the input, ordered by path and
// line: files that failed to load (serving their last good objects),
// conflicts, and warnings.
func (s *Source) Problems() []Problem {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.problems(s.displayPath)
}

// Stats returns the source's counters.
func (s *Source) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Files = len(s.st.files)
	st.Objects = s.st.objects()
	st.FailingFiles = s.st.failing()
	st.Conflicts = len(s.st.conflicts)
	return st
}

// displayPath turns a path within fsys into the one reported.
func (s *Source) displayPath(p string) string {
	if s.dir == "" {
		return p
	}
	return filepath.Join(s.dir, filepath.FromSlash(p))
}

// Load reads every file and applies them as one transaction, then marks
// every collection synced. Problems in files are reported, not returned;
// the error is for a root that cannot be read. A second call reloads
// whatever changed.
func (s *Source) Load() error {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	s.mu.Lock()
	first := !s.loaded
	if first {
		s.loaded = true
		s.dec = newDecoder(s.scheme, s.kinds, s.unstructuredKind, s.opts.strict, s.opts.defaultNamespace)
	}
	s.mu.Unlock()
	err := s.refreshLocked(nil, []string{"."})
	if first {
		// Even an unreadable root leaves the collections synced (empty):
		// the error is reported, and readers are not held forever.
		s.mu.Lock()
		kinds := make([]*kind, 0, len(s.kinds))
		for _, k := range s.kinds {
			kinds = append(kinds, k)
		}
		s.mu.Unlock()
		for _, k := range kinds {
			k.markSynced()
		}
		s.unstructuredKind.markSynced()
	}
	return err
}

// Run loads the source if Load has not been called and, for a directory
// source, watches it and applies changes until ctx ends. It returns once
// every goroutine it started has ended: nil when ctx ends, or the error
// that stopped the watch. A source from NewFS returns after loading.
func (s *Source) Run(ctx context.Context) error {
	if s.dir == "" {
		s.mu.Lock()
		loaded := s.loaded
		s.mu.Unlock()
		if loaded {
			return nil
		}
		return s.Load()
	}
	return s.watch(ctx)
}

// refreshLocked re-reads files and directories (paths within fsys) and
// applies what changed. Files named in files that no longer exist, and
// known files under dirs that are no longer found, are removed. The caller
// holds loadMu.
func (s *Source) refreshLocked(files, dirs []string) error {
	toRead := map[string]bool{}
	toRemove := map[string]bool{}
	var errs []error
	for _, dir := range dirs {
		found, err := s.walk(dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range found {
			toRead[f] = true
		}
		for known := range s.st.files {
			if under(known, dir) && !toRead[known] {
				toRemove[known] = true
			}
		}
	}
	for _, f := range files {
		info, err := fs.Stat(s.fsys, f)
		switch {
		case err != nil:
			// Gone, or no longer readable: drop the file and, if it was a
			// directory, everything known under it.
			for known := range s.st.files {
				if known == f || under(known, f) {
					toRemove[known] = true
				}
			}
		case info.Mode().IsRegular() && isManifest(f):
			toRead[f] = true
		}
	}
	for f := range toRead {
		delete(toRemove, f)
	}

	changes := s.readAll(toRead)
	for f := range toRemove {
		if _, known := s.st.files[f]; known {
			changes[f] = nil
		}
	}
	if len(changes) > 0 {
		s.applyLocked(changes)
	}
	return errors.Join(errs...)
}

// readAll reads and decodes files in parallel. Files whose content is
// unchanged since the last read are left out; so are files that cannot be
// read (they were removed in between, and their event follows).
func (s *Source) readAll(files map[string]bool) map[string]*parsed {
	paths := make(chan string)
	type result struct {
		path string
		p    *parsed
	}
	results := make(chan result)
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), max(len(files), 1))
	for range workers {
		wg.Go(func() {
			for f := range paths {
				data, err := fs.ReadFile(s.fsys, f)
				if err != nil {
					continue
				}
				if old := s.st.files[f]; old != nil && old.sum == hashBytes(data) {
					continue
				}
				results <- result{f, s.dec.decodeFile(f, data)}
			}
		})
	}
	go func() {
		for f := range files {
			paths <- f
		}
		close(paths)
		wg.Wait()
		close(results)
	}()
	changes := map[string]*parsed{}
	for r := range results {
		changes[r.path] = r.p
	}
	return changes
}

// applyLocked applies decoded files as one transaction and reports their
// problems, the conflicts they start and, after the first load, the files
// that loaded. The caller holds loadMu.
func (s *Source) applyLocked(changes map[string]*parsed) {
	s.mu.Lock()
	w, conflicts := s.st.apply(changes)
	s.stats.Loads++
	reload := s.stats.Loads > 1
	var loaded []string
	for path, p := range changes {
		if p == nil {
			s.opts.logger.Info("manifest file removed", "path", s.displayPath(path))
			continue
		}
		if p.failed {
			s.stats.FileErrors++
		} else {
			loaded = append(loaded, s.displayPath(path))
		}
		s.logProblems(p.problems)
	}
	for _, id := range conflicts {
		owners := s.st.claims[id]
		s.opts.logger.Warn("manifest conflict: an object is defined in more than one file; the first path wins",
			"object", describe(id), "used", s.displayPath(owners[0]), "ignored", displayAll(s.displayPath, owners[1:]))
	}
	s.mu.Unlock()
	if reload && len(loaded) > 0 {
		slices.Sort(loaded)
		s.opts.logger.Info("manifests reloaded", "files", loaded, "changed", w.count())
	}
	if w.empty() {
		return
	}
	s.g.Update(func(tx *krt.Txn) {
		for k, objs := range w.sets {
			k.set(tx, objs)
		}
		for k, keys := range w.dels {
			k.del(tx, keys)
		}
	})
}

// logProblems logs a loaded file's problems: an error keeps the file's
// last good objects.
func (s *Source) logProblems(problems []Problem) {
	for _, pr := range problems {
		pr.Path = s.displayPath(pr.Path)
		if pr.Severity == SeverityError {
			s.opts.logger.Error("manifest rejected; keeping the file's last good objects", "problem", pr.String())
		} else {
			s.opts.logger.Warn("manifest warning", "problem", pr.String())
		}
	}
}

func displayAll(display func(string) string, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = display(p)
	}
	return out
}

// walk returns the manifest files under dir, skipping hidden entries.
// Symbolic links to files are followed; links to directories are not.
func (s *Source) walk(dir string) ([]string, error) {
	var files []string
	err := fs.WalkDir(s.fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // vanished while walking; its event follows
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || !isManifest(p) {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			info, err := fs.Stat(s.fsys, p)
			if err != nil || !info.Mode().IsRegular() {
				return nil
			}
		} else if !d.Type().IsRegular() {
			return nil
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", s.displayPath(dir), err)
	}
	return files, nil
}

// isManifest reports whether p names a manifest file.
func isManifest(p string) bool {
	switch path.Ext(p) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// under reports whether p is inside directory dir (both within fsys).
func under(p, dir string) bool {
	return dir == "." || strings.HasPrefix(p, dir+"/")
}

// gatewayVersion is the Gateway API's group and version as a
// schema.GroupVersion: the package's own GroupVersion is a metav1 one,
// without WithKind.
var gatewayVersion = schema.GroupVersion(gatewayv1.GroupVersion)
