package routestatus

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/krt"
)

const (
	// coalesceDelay is how long a changed route waits in the queue, so
	// that a burst of changes to it is reconciled once.
	coalesceDelay = 50 * time.Millisecond
	// retryBase and retryMax bound the per-route backoff after a failed
	// write.
	retryBase = 100 * time.Millisecond
	retryMax  = 30 * time.Second
	// requestTimeout bounds one API call, so that a hung request does not
	// hold the only worker.
	requestTimeout = 15 * time.Second
)

// Options configure a Writer.
type Options struct {
	// ControllerName is written as status.parents[].controllerName and
	// marks the entries the writer owns, e.g. "meshd.io/mesh-controller".
	// Required.
	ControllerName string
	// QPS and Burst bound the rate of status writes with a token bucket
	// shared by every route. Deciding that a route needs no write takes no
	// token. Defaults: 10 and 20.
	QPS   float64
	Burst int
	// Logger receives failed writes, with the route key and the error,
	// and each write at debug level. Default: discard.
	Logger *slog.Logger
}

// Routes are the route collections the statuses were computed from, keyed
// "namespace/name" as the sources key them. The writer reads each route's
// spec and current status from them, so a route whose status is already
// right costs no API call. A nil collection is not written to.
type Routes struct {
	HTTP krt.Collection[*gatewayv1.HTTPRoute]
	GRPC krt.Collection[*gatewayv1.GRPCRoute]
}

// Stats are a Writer's counters since New, over all its Runs.
type Stats struct {
	// Written counts status updates made.
	Written uint64
	// Unchanged counts reconciliations that found the status as wanted and
	// wrote nothing.
	Unchanged uint64
	// Conflicts counts updates refused because the route had changed on
	// the server since it was read; each is retried on a fresh copy.
	Conflicts uint64
	// NotFound counts routes skipped because the cluster does not hold
	// them: deleted, or only in a source other than the cluster.
	NotFound uint64
	// Errors counts failed reconciliations. Each is logged and retried
	// with per-route backoff, except updates the server rejects as
	// invalid, which wait for the route's next change.
	Errors uint64
	// Queue is the number of routes waiting to be reconciled; 0 while Run
	// is not running.
	Queue int
}

// Writer writes route status for one controller name. Create it with
// New; it writes only while Run runs.
type Writer struct {
	statuses   krt.Collection[collections.RouteStatus]
	kinds      map[string]routeKind
	controller gatewayv1.GatewayController
	limiter    flowcontrol.RateLimiter
	log        *slog.Logger

	runMu sync.Mutex // held by Run: one term at a time

	qmu   sync.Mutex
	queue workqueue.TypedRateLimitingInterface[string] // nil while not running

	written, unchanged, conflicts, notFound, errs atomic.Uint64

	fmu     sync.Mutex
	failing map[string]Failure // by route key, until a reconciliation succeeds
}

// Failure is a route whose status the writer last failed to write.
type Failure struct {
	Route string // "Kind/namespace/name"
	Error string
	Since time.Time // the first failure in a row
}

// New returns a writer of the statuses in statuses to the routes of
// routes, through client. It starts nothing; Run does. It panics when
// opts.ControllerName is empty.
func New(client gatewayclient.Interface, statuses krt.Collection[collections.RouteStatus], routes Routes, opts Options) *Writer {
	if opts.ControllerName == "" {
		panic("routestatus: Options.ControllerName is required")
	}
	if opts.QPS <= 0 {
		opts.QPS = 10
	}
	if opts.Burst <= 0 {
		opts.Burst = 20
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	w := &Writer{
		statuses:   statuses,
		kinds:      map[string]routeKind{},
		controller: gatewayv1.GatewayController(opts.ControllerName),
		limiter:    flowcontrol.NewTokenBucketRateLimiter(float32(opts.QPS), opts.Burst),
		log:        opts.Logger,
		failing:    map[string]Failure{},
	}
	if routes.HTTP != nil {
		w.kinds[collections.KindHTTPRoute] = &kindOf[*gatewayv1.HTTPRoute]{
			kind:   collections.KindHTTPRoute,
			routes: routes.HTTP,
			refs:   func(r *gatewayv1.HTTPRoute) []gatewayv1.ParentReference { return r.Spec.ParentRefs },
			status: func(r *gatewayv1.HTTPRoute) *gatewayv1.RouteStatus { return &r.Status.RouteStatus },
			get: func(ctx context.Context, ns, name string) (*gatewayv1.HTTPRoute, error) {
				return client.GatewayV1().HTTPRoutes(ns).Get(ctx, name, metav1.GetOptions{})
			},
			update: func(ctx context.Context, r *gatewayv1.HTTPRoute) error {
				_, err := client.GatewayV1().HTTPRoutes(r.Namespace).UpdateStatus(ctx, r, metav1.UpdateOptions{})
				return err
			},
			copy: (*gatewayv1.HTTPRoute).DeepCopy,
		}
	}
	if routes.GRPC != nil {
		w.kinds[collections.KindGRPCRoute] = &kindOf[*gatewayv1.GRPCRoute]{
			kind:   collections.KindGRPCRoute,
			routes: routes.GRPC,
			refs:   func(r *gatewayv1.GRPCRoute) []gatewayv1.ParentReference { return r.Spec.ParentRefs },
			status: func(r *gatewayv1.GRPCRoute) *gatewayv1.RouteStatus { return &r.Status.RouteStatus },
			get: func(ctx context.Context, ns, name string) (*gatewayv1.GRPCRoute, error) {
				return client.GatewayV1().GRPCRoutes(ns).Get(ctx, name, metav1.GetOptions{})
			},
			update: func(ctx context.Context, r *gatewayv1.GRPCRoute) error {
				_, err := client.GatewayV1().GRPCRoutes(r.Namespace).UpdateStatus(ctx, r, metav1.UpdateOptions{})
				return err
			},
			copy: (*gatewayv1.GRPCRoute).DeepCopy,
		}
	}
	return w
}

// Stats returns the writer's counters.
func (w *Writer) Stats() Stats {
	s := Stats{
		Written:   w.written.Load(),
		Unchanged: w.unchanged.Load(),
		Conflicts: w.conflicts.Load(),
		NotFound:  w.notFound.Load(),
		Errors:    w.errs.Load(),
	}
	w.qmu.Lock()
	if w.queue != nil {
		s.Queue = w.queue.Len()
	}
	w.qmu.Unlock()
	return s
}

// Run writes status until ctx ends: once the collections have synced, it
// reconciles every route that has a computed status or carries entries of
// the controller, then each route that changes. It returns once nothing
// of it runs any more; it may be called again for a later term, but not
// concurrently (a second call waits for the first to return).
func (w *Writer) Run(ctx context.Context) {
	w.runMu.Lock()
	defer w.runMu.Unlock()
	synced := []interface{ Synced() <-chan struct{} }{w.statuses}
	for _, k := range w.kinds {
		synced = append(synced, k.collection())
	}
	// Statuses computed before the inputs are complete could be wrong
	// (a Service not listed yet reads as missing): wait.
	if krt.WaitSynced(ctx, synced...) != nil {
		return
	}

	q := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](retryBase, retryMax),
		workqueue.TypedRateLimitingQueueConfig[string]{})
	add := func(key string) { q.AddAfter(key, coalesceDelay) }
	// The replays make the term's first batches hold every current item.
	regs := []*krt.Registration{w.statuses.Register(func(b krt.Batch[collections.RouteStatus]) {
		for _, e := range b.Events {
			add(e.Key)
		}
	}, krt.WithReplay())}
	for _, k := range w.kinds {
		regs = append(regs, k.register(w, add))
	}
	w.qmu.Lock()
	w.queue = q
	w.qmu.Unlock()

	done := make(chan struct{})
	go func() {
		defer close(done)
		for w.processNext(ctx, q) {
		}
	}()
	<-ctx.Done()
	for _, r := range regs {
		r.Unregister()
	}
	// A batch being delivered may still add: the shut down queue ignores
	// it. The worker skips what is left in the queue.
	q.ShutDown()
	<-done
	w.qmu.Lock()
	w.queue = nil
	w.qmu.Unlock()
}

// processNext reconciles the next queued route; false once the queue is
// shut down and empty.
func (w *Writer) processNext(ctx context.Context, q workqueue.TypedRateLimitingInterface[string]) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(key)
	if ctx.Err() != nil {
		// The term is over; the next one replays everything anyway.
		return true
	}
	out, err := w.reconcile(ctx, key)
	switch {
	case err == nil:
		q.Forget(key)
		w.failed(key, nil)
		switch out {
		case outWritten:
			w.written.Add(1)
		case outUnchanged:
			w.unchanged.Add(1)
		case outNotFound:
			w.notFound.Add(1)
		}
	case ctx.Err() != nil:
		// Cut short by the end of the term: not a failure.
	case apierrors.IsInvalid(err):
		// The same write would be rejected again; the route's next change
		// brings a new attempt.
		w.errs.Add(1)
		w.failed(key, err)
		q.Forget(key)
		w.log.Error("route status rejected", "route", key, "err", err)
	default:
		w.errs.Add(1)
		w.failed(key, err)
		q.AddRateLimited(key)
		w.log.Warn("route status write failed; will retry", "route", key, "err", err, "retries", q.NumRequeues(key))
	}
	return true
}

// failed records the outcome of a route's reconciliation: err nil clears
// a failure.
func (w *Writer) failed(key string, err error) {
	w.fmu.Lock()
	defer w.fmu.Unlock()
	if err == nil {
		delete(w.failing, key)
		return
	}
	f, ok := w.failing[key]
	if !ok {
		f = Failure{Route: key, Since: time.Now()}
	}
	f.Error = err.Error()
	w.failing[key] = f
}

// Failing returns the routes whose last reconciliation failed, by key:
// each stays until a later one succeeds.
func (w *Writer) Failing() []Failure {
	w.fmu.Lock()
	defer w.fmu.Unlock()
	out := make([]Failure, 0, len(w.failing))
	for _, f := range w.failing {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b Failure) int { return strings.Compare(a.Route, b.Route) })
	return out
}

// outcome is how a reconciliation ended.
type outcome uint8

const (
	outWritten outcome = iota + 1
	outUnchanged
	outNotFound
	// outStale: the collections were caught between two versions of the
	// route; the newer version's event reconciles it again.
	outStale
)

// reconcile brings the controller's entries in the status of the route
// with key "Kind/namespace/name" in line with its computed status.
func (w *Writer) reconcile(ctx context.Context, key string) (outcome, error) {
	parts := strings.SplitN(key, "/", 3)
	if len(parts) != 3 {
		return 0, fmt.Errorf("malformed route key %q", key)
	}
	k, ok := w.kinds[parts[0]]
	if !ok {
		// A kind without a collection is not written to.
		return outNotFound, nil
	}
	return k.reconcile(ctx, w, key, parts[1], parts[2])
}

// status returns the computed status of a route, nil when it has none.
func (w *Writer) status(key string) *collections.RouteStatus {
	if rs, ok := w.statuses.Get(key); ok {
		return &rs
	}
	return nil
}

// desired returns current with the controller's entries replaced by those
// rs calls for, and whether they differ.
func (w *Writer) desired(rs *collections.RouteStatus, current []gatewayv1.RouteParentStatus) ([]gatewayv1.RouteParentStatus, bool) {
	// The server keeps seconds: a finer time would read back different.
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	ours := ownParents(w.controller, rs, owned(w.controller, current), now)
	return merge(w.controller, current, ours)
}

// relevant reports whether the writer has anything to do with a route:
// it has a Service parent, or entries of the controller to keep or remove.
func (w *Writer) relevant(refs []gatewayv1.ParentReference, st *gatewayv1.RouteStatus) bool {
	return collections.HasServiceParent(refs) || len(owned(w.controller, st.Parents)) > 0
}

// routeKind is one kind of route the writer writes.
type routeKind interface {
	collection() interface{ Synced() <-chan struct{} }
	// register enqueues, through add, the key of each changed route the
	// writer has anything to do with.
	register(w *Writer, add func(key string)) *krt.Registration
	reconcile(ctx context.Context, w *Writer, key, ns, name string) (outcome, error)
}

// kindOf implements routeKind for one route type.
type kindOf[T metav1.Object] struct {
	kind   string
	routes krt.Collection[T]
	refs   func(T) []gatewayv1.ParentReference
	status func(T) *gatewayv1.RouteStatus // points into the object
	get    func(ctx context.Context, ns, name string) (T, error)
	update func(ctx context.Context, obj T) error
	copy   func(T) T
}

func (k *kindOf[T]) collection() interface{ Synced() <-chan struct{} } { return k.routes }

func (k *kindOf[T]) register(w *Writer, add func(key string)) *krt.Registration {
	return k.routes.Register(func(b krt.Batch[T]) {
		for _, e := range b.Events {
			if (e.Old != nil && w.relevant(k.refs(*e.Old), k.status(*e.Old))) ||
				(e.New != nil && w.relevant(k.refs(*e.New), k.status(*e.New))) {
				add(k.kind + "/" + e.Key)
			}
		}
	}, krt.WithReplay())
}

// reconcile decides on the collections' copies, which are almost always
// current, and reads the server only after a conflict. Every write takes
// a token first; since waiting for one may take long, the decision is made
// again after the wait.
func (k *kindOf[T]) reconcile(ctx context.Context, w *Writer, key, ns, name string) (outcome, error) {
	var (
		out outcome
		a   attempt
	)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var err error
		for out = 0; out == 0 && err == nil; {
			out, err = k.step(ctx, w, &a, key, ns, name)
		}
		return err
	})
	if apierrors.IsNotFound(err) {
		return outNotFound, nil
	}
	return out, err
}

// attempt is what reconcile carries from one decision to the next.
type attempt struct {
	token    bool // a token is held for the next write
	conflict bool // the last write conflicted: read the server
}

// step makes one decision. It returns outcome 0 when it only took a
// token, so the caller decides again on fresh copies.
func (k *kindOf[T]) step(ctx context.Context, w *Writer, a *attempt, key, ns, name string) (outcome, error) {
	rs := w.status(key)
	obj, out, err := k.current(ctx, rs, a.conflict, ns, name)
	if out != 0 || err != nil {
		return out, err
	}
	parents, changed := w.desired(rs, k.status(obj).Parents)
	if !changed {
		return outUnchanged, nil
	}
	if !a.token {
		if err := w.limiter.Wait(ctx); err != nil {
			return 0, fmt.Errorf("waiting to write: %w", err)
		}
		a.token = true
		return 0, nil
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	a.token = false
	cp := k.copy(obj)
	k.status(cp).Parents = parents
	err = call(ctx, func(ctx context.Context) error { return k.update(ctx, cp) })
	if apierrors.IsConflict(err) {
		w.conflicts.Add(1)
		a.conflict = true
	}
	if err != nil {
		return 0, fmt.Errorf("updating status: %w", err)
	}
	w.log.Debug("route status written", "route", key, "generation", obj.GetGeneration())
	return outWritten, nil
}

// current returns the route to decide on: the collection's copy, or the
// server's after a conflict. A nonzero outcome means there is nothing to
// write: the route is gone, not from a cluster, or caught between versions.
func (k *kindOf[T]) current(ctx context.Context, rs *collections.RouteStatus, conflict bool, ns, name string) (T, outcome, error) {
	cached, ok := k.routes.Get(ns + "/" + name)
	if !ok || cached.GetResourceVersion() == "" {
		// Not in the collection, or not from a cluster (a source
		// without resource versions): nothing to write to.
		return cached, outNotFound, nil
	}
	if rs != nil && rs.Generation != cached.GetGeneration() {
		return cached, outStale, nil
	}
	if !conflict {
		return cached, 0, nil
	}
	var obj T
	err := call(ctx, func(ctx context.Context) (err error) {
		obj, err = k.get(ctx, ns, name)
		return err
	})
	if err != nil {
		return obj, 0, fmt.Errorf("reading route: %w", err)
	}
	if obj.GetGeneration() != cached.GetGeneration() {
		// The server holds a newer spec; the collection delivers it
		// and its status soon.
		return obj, outStale, nil
	}
	return obj, 0, nil
}

// call runs one API call under requestTimeout.
func call(ctx context.Context, fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	return fn(ctx)
}
