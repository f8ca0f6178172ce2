package statuswriter

import (
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/client-go/util/workqueue"

	"github.com/meshd/meshd/krt"
)

const (
	// coalesceDelay is how long a changed object waits in the queue, so
	// that a burst of changes to it is reconciled once.
	coalesceDelay = 50 * time.Millisecond
	// retryBase and retryMax bound the per-object backoff after a failed
	// write.
	retryBase = 100 * time.Millisecond
	retryMax  = 30 * time.Second
	// requestTimeout bounds one API call, so that a hung request does not
	// hold the only worker.
	requestTimeout = 15 * time.Second
)

// Options configure a Writer.
type Options struct {
	// QPS and Burst bound the rate of status writes with a token bucket
	// shared by every kind. Deciding that an object needs no write takes
	// no token. Defaults: 10 and 20.
	QPS   float64
	Burst int
	// Logger receives failed writes, with the object's key and the error,
	// and each write at debug level. Default: discard.
	Logger *slog.Logger
}

// Stats are a Writer's counters since New, over all its Runs.
type Stats struct {
	// Written counts status updates made.
	Written uint64
	// Unchanged counts reconciliations that found the status as wanted and
	// wrote nothing.
	Unchanged uint64
	// Conflicts counts updates refused because the object had changed on
	// the server since it was read; each is retried on a fresh copy.
	Conflicts uint64
	// NotFound counts objects skipped because the cluster does not hold
	// them: deleted, or only in a source other than the cluster.
	NotFound uint64
	// Errors counts failed reconciliations. Each is logged and retried
	// with per-object backoff, except updates the server rejects as
	// invalid, which wait for the object's next change.
	Errors uint64
	// Queue is the number of objects waiting to be reconciled; 0 while Run
	// is not running.
	Queue int
}

// Failure is an object whose status the writer last failed to write.
type Failure struct {
	Key   string // "Kind/namespace/name"
	Error string
	Since time.Time // the first failure in a row
}

// Writer writes the status of the objects of its kinds. Create it with
// New; it writes only while Run runs.
type Writer struct {
	kinds    map[string]Target
	triggers []Trigger
	limiter  flowcontrol.RateLimiter
	log      *slog.Logger

	runMu sync.Mutex // held by Run: one term at a time

	qmu   sync.Mutex
	queue workqueue.TypedRateLimitingInterface[string] // nil while not running

	written, unchanged, conflicts, notFound, errs atomic.Uint64

	// superseded keeps a copy the writer's own write replaced from
	// being written from again.
	superseded superseded

	fmu     sync.Mutex
	failing map[string]Failure // by key, until a reconciliation succeeds
}

// New returns a writer of the status of kinds' objects, reconciling each
// object whose own event or whose trigger's event names it. It starts
// nothing; Run does. It panics when two kinds have the same name.
func New(opts Options, triggers []Trigger, kinds ...Target) *Writer {
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
		kinds:    map[string]Target{},
		triggers: triggers,
		limiter:  flowcontrol.NewTokenBucketRateLimiter(float32(opts.QPS), opts.Burst),
		log:      opts.Logger,
		failing:  map[string]Failure{},
	}
	for _, k := range kinds {
		if _, dup := w.kinds[k.name()]; dup {
			panic("statuswriter: two kinds named " + k.name())
		}
		w.kinds[k.name()] = k
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

// Failing returns the objects whose last reconciliation failed, by key:
// each stays until a later one succeeds.
func (w *Writer) Failing() []Failure {
	w.fmu.Lock()
	defer w.fmu.Unlock()
	out := make([]Failure, 0, len(w.failing))
	for _, f := range w.failing {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b Failure) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// failed records the outcome of an object's reconciliation: err nil
// clears a failure.
func (w *Writer) failed(key string, err error) {
	w.fmu.Lock()
	defer w.fmu.Unlock()
	if err == nil {
		delete(w.failing, key)
		return
	}
	f, ok := w.failing[key]
	if !ok {
		f = Failure{Key: key, Since: time.Now()}
	}
	f.Error = err.Error()
	w.failing[key] = f
}

// count records a successful reconciliation's outcome.
func (w *Writer) count(out Outcome) {
	switch out {
	case Written:
		w.written.Add(1)
	case Unchanged:
		w.unchanged.Add(1)
	case NotFound:
		w.notFound.Add(1)
	}
}

// handle files a reconciliation's error: retried with backoff, or, for
// an update the server rejects as invalid, left for the next change.
func (w *Writer) handle(q workqueue.TypedRateLimitingInterface[string], key string, err error) {
	w.errs.Add(1)
	w.failed(key, err)
	if apierrors.IsInvalid(err) {
		q.Forget(key)
		w.log.Error("status rejected", "key", key, "err", err)
		return
	}
	q.AddRateLimited(key)
	w.log.Warn("status write failed; will retry", "key", key, "err", err, "retries", q.NumRequeues(key))
}

// registerAll registers the handlers that feed the queue through add.
func (w *Writer) registerAll(add func(key string)) []*krt.Registration {
	var regs []*krt.Registration
	for _, t := range w.triggers {
		regs = append(regs, t.register(add))
	}
	for _, k := range w.kinds {
		regs = append(regs, k.register(add))
	}
	return regs
}
