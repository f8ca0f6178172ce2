package kube

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
)

// CollectionStats counts what one informer delivered.
type CollectionStats struct {
	Name     string `json:"name"`
	Resource string `json:"resource"`
	// Skipped is set while the resource is not served (its CRD is not
	// installed): the collection is empty and synced until it is.
	Skipped bool   `json:"skipped,omitempty"`
	Synced  bool   `json:"synced"`
	Items   int    `json:"items"`
	Adds    uint64 `json:"adds"`
	Updates uint64 `json:"updates"`
	Deletes uint64 `json:"deletes"`
	// WatchErrors counts the failed lists and broken watches the informer
	// recovered from by listing again.
	WatchErrors uint64 `json:"watchErrors"`
	// BadObjects counts objects that were not of the collection's type
	// (for AddDynamic, that failed to convert); they are left out.
	BadObjects uint64 `json:"badObjects"`
}

// runner is the type-independent face of a feed, for Source.Run.
type runner interface {
	gvr() schema.GroupVersionResource
	// discovered says whether Run must check that the resource is served.
	discovered() bool
	start(stop <-chan struct{})
	shutdown()
	// waitAndFlush writes the initial listing once the informer has
	// delivered it and marks the collection synced.
	waitAndFlush(stop <-chan struct{})
	// skip marks the collection synced and empty while the resource is
	// not served; unskip undoes the mark before the informer starts late.
	skip()
	unskip()
	stats() CollectionStats
}

// feed copies one informer's objects into a krt.Static.
type feed[T sources.Object] struct {
	name     string
	resource schema.GroupVersionResource
	// checkDiscovery is set for resources that may not be installed.
	checkDiscovery bool
	static         krt.Static[T]
	key            func(T) string
	informer       cache.SharedIndexInformer
	reg            cache.ResourceEventHandlerRegistration
	startFn        func(stop <-chan struct{})
	shutdownFn     func()
	logger         *slog.Logger

	// mu orders the initial flush against the informer's handler calls.
	mu      sync.Mutex // guards following
	synced  bool
	pending map[string]T // the initial listing, until synced

	skipped                                    atomic.Bool
	adds, updates, deletes, watchErrs, badObjs atomic.Uint64
}

// newFeed connects informer to a new unsynced Static named name. start and
// shutdown start and stop the informer's factory; neither is called here.
func newFeed[T sources.Object](s *Source, name string, resource schema.GroupVersionResource, checkDiscovery bool,
	informer cache.SharedIndexInformer, start func(stop <-chan struct{}), shutdown func(), opts ...krt.Option) *feed[T] {
	key := keyFor[T](s, resource.Resource)
	opts = append([]krt.Option{krt.WithUnsynced(), krt.WithKey(key)}, opts...)
	f := &feed[T]{
		name:           name,
		resource:       resource,
		checkDiscovery: checkDiscovery,
		static:         krt.NewStatic[T](s.g, sources.CollectionOptions[T](name, opts...)...),
		key:            key,
		informer:       informer,
		startFn:        start,
		shutdownFn:     shutdown,
		logger:         s.opts.logger.With("collection", name),
		pending:        map[string]T{},
	}
	// Both calls fail only once the informer has started, which it has not.
	if err := informer.SetWatchErrorHandler(f.onWatchError); err != nil {
		panic(fmt.Sprintf("kube: %s: %v", name, err))
	}
	reg, err := informer.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, _ bool) { f.upsert(obj, &f.adds) },
		UpdateFunc: func(_, obj any) { f.upsert(obj, &f.updates) },
		DeleteFunc: f.delete,
	})
	if err != nil {
		panic(fmt.Sprintf("kube: %s: %v", name, err))
	}
	f.reg = reg
	s.add(f)
	return f
}

func (f *feed[T]) onWatchError(r *cache.Reflector, err error) {
	f.watchErrs.Add(1)
	// The informer lists again after a backoff; nothing is lost.
	f.logger.Warn("watch failed; relisting", "resource", f.resource.String(), "err", err)
}

// upsert adds or replaces obj. Informer handlers run one at a time, in
// order, so a plain Set is idempotent across relists. The write is queued
// (SetLater): a burst of events, a rollout's, commits in a few batched
// transactions instead of one per event, and the informer never waits
// for propagation.
func (f *feed[T]) upsert(obj any, counter *atomic.Uint64) {
	t, ok := obj.(T)
	if !ok {
		f.badObjs.Add(1)
		f.logger.Error("unexpected object; left out", "type", fmt.Sprintf("%T", obj))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	counter.Add(1)
	if !f.synced {
		f.pending[f.key(t)] = t
		return
	}
	f.static.SetLater(t)
}

func (f *feed[T]) delete(obj any) {
	var key string
	switch o := obj.(type) {
	case T:
		key = f.key(o)
	case cache.DeletedFinalStateUnknown:
		// The watch missed the delete; a relist noticed the object is gone.
		// The tombstone's key has the same namespace/name form, without
		// the cluster the cached object carries.
		key = o.Key
		if t, ok := o.Obj.(T); ok {
			key = f.key(t)
		}
	default:
		f.badObjs.Add(1)
		f.logger.Error("unexpected deleted object; ignored", "type", fmt.Sprintf("%T", obj))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deletes.Add(1)
	if !f.synced {
		delete(f.pending, key)
		return
	}
	f.static.DeleteLater(key)
}

func (f *feed[T]) gvr() schema.GroupVersionResource { return f.resource }
func (f *feed[T]) discovered() bool                 { return f.checkDiscovery }
func (f *feed[T]) start(stop <-chan struct{})       { f.startFn(stop) }
func (f *feed[T]) shutdown()                        { f.shutdownFn() }

func (f *feed[T]) waitAndFlush(stop <-chan struct{}) {
	select {
	case <-f.reg.HasSyncedChecker().Done():
	case <-stop:
		return
	}
	f.mu.Lock()
	items := make([]T, 0, len(f.pending))
	for _, t := range f.pending {
		items = append(items, t)
	}
	f.static.Reset(items)
	f.synced, f.pending = true, nil
	f.mu.Unlock()
	f.static.MarkSynced()
	f.logger.Debug("initial listing loaded", "items", len(items))
}

func (f *feed[T]) skip() {
	f.skipped.Store(true)
	f.static.MarkSynced()
}

func (f *feed[T]) unskip() { f.skipped.Store(false) }

func (f *feed[T]) stats() CollectionStats {
	return CollectionStats{
		Name:        f.name,
		Resource:    f.resource.String(),
		Skipped:     f.skipped.Load(),
		Synced:      f.static.HasSynced(),
		Items:       f.static.Len(),
		Adds:        f.adds.Load(),
		Updates:     f.updates.Load(),
		Deletes:     f.deletes.Load(),
		WatchErrors: f.watchErrs.Load(),
		BadObjects:  f.badObjs.Load(),
	}
}
