package multicluster

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
)

// Remotes watches the remote clusters of a mesh and joins their Services,
// Pods, EndpointSlices and Nodes into one set of collections (Inputs).
// Which clusters to watch comes from origins (Apply): a Secret each, or
// the command line. Create it with New, then call Run.
type Remotes struct {
	g     *krt.Graph
	opts  options
	joins *joins
	wake  chan struct{}

	mu       sync.Mutex // guards following
	origins  map[string]originClusters
	clusters map[string]*state // by cluster name

	started atomic.Bool
}

type originClusters struct {
	clusters []Cluster
	err      error
}

// state is what runs for one cluster name.
type state struct {
	origin string
	active *member // joined, or to be joined once synced
	next   *member // a rotated kubeconfig's member, until it syncs
	joined bool
	// expired is set once the joined cluster stayed unreachable for
	// WithStaleTimeout: its collections left the joins until it answers.
	expired bool
	// stale is set while the joined cluster's items are flagged stale
	// in the inputs, since staleSince.
	stale      bool
	staleSince time.Time
	// checked is when the joined cluster's health was last judged.
	checked time.Time
	gens    int
	// conflict names the other origins that name the cluster too.
	conflict []string
}

// Option configures Remotes.
type Option func(*options)

type options struct {
	logger        *slog.Logger
	syncTimeout   time.Duration
	stale         stalePolicy
	checkInterval time.Duration
	clusterName   string
	now           func() time.Time
}

// WithClusterName sets the local cluster's name (collections.
// WithClusterName): a remote cluster of that name is refused with
// ErrLocalName. Default: "", the local cluster is unnamed.
func WithClusterName(name string) Option { return func(o *options) { o.clusterName = name } }

// WithLogger sets the logger of cluster changes and of the clusters'
// sources. Default: discard.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithSyncTimeout sets how long a cluster may take to list everything
// before its status says it timed out; it keeps trying and joins once
// listed. Default: 30s.
func WithSyncTimeout(d time.Duration) Option { return func(o *options) { o.syncTimeout = d } }

// WithStaleTimeout sets how long a joined cluster that stopped answering
// keeps its last items (flagged stale in its status) before they leave
// the joins; they come back once it answers. It counts from the first
// failed request, and a cluster leaves no sooner than it turns stale
// (WithStaleGrace). Default: 5m.
func WithStaleTimeout(d time.Duration) Option { return func(o *options) { o.stale.timeout = d } }

// WithStaleGrace sets how long every request to a joined cluster must
// have failed before its items are flagged stale, so that a brief blip
// (a restarting API server, a dropped connection) flags nothing. The
// first request that succeeds clears the flag. Default: 10s.
func WithStaleGrace(d time.Duration) Option { return func(o *options) { o.stale.grace = d } }

// WithStaleFailures sets how many requests in a row must fail, as well
// as WithStaleGrace, before a joined cluster is flagged stale; n below 1
// counts as 1. Default: 3.
func WithStaleFailures(n int) Option {
	return func(o *options) { o.stale.failures = uint64(max(n, 1)) }
}

// WithCheckInterval sets how often Run checks the clusters' health for
// staleness. Default: 1s.
func WithCheckInterval(d time.Duration) Option { return func(o *options) { o.checkInterval = d } }

// New returns Remotes whose joins are created in g, with no cluster yet.
// It starts nothing.
func New(g *krt.Graph, opts ...Option) *Remotes {
	o := options{logger: slog.New(slog.DiscardHandler), syncTimeout: 30 * time.Second,
		stale:         stalePolicy{failures: 3, grace: 10 * time.Second, timeout: 5 * time.Minute},
		checkInterval: time.Second, now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	return &Remotes{g: g, opts: o, joins: newJoins(g), wake: make(chan struct{}, 1),
		origins: map[string]originClusters{}, clusters: map[string]*state{}}
}

// Inputs returns the joined collections of every joined cluster: Services
// keyed "namespace/name" (the same Service in several clusters is one;
// the cluster whose name sorts first wins), Pods, EndpointSlices and Nodes
// keyed by sources.ClusterKey. The other kinds are nil (see
// sources.Inputs.Complete). They are synced from the start: a cluster
// joins once it has listed, so a slow one never holds the others back.
func (r *Remotes) Inputs() sources.Inputs { return r.joins.inputs }

// Apply sets the clusters an origin names, replacing what it named
// before; no clusters (nil) removes the origin. err, if not nil, is shown
// in the origin's clusters' status (a Secret with a bad entry). An origin
// is a name such as "secret meshd/remote-west" or "--remote-kubeconfig".
// Apply may be called before and during Run.
func (r *Remotes) Apply(origin string, clusters []Cluster, err error) {
	r.mu.Lock()
	if len(clusters) == 0 && err == nil {
		delete(r.origins, origin)
	} else {
		r.origins[origin] = originClusters{clusters: slices.Clone(clusters), err: err}
	}
	r.mu.Unlock()
	r.poke()
}

func (r *Remotes) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run watches the clusters until ctx ends, then stops them all and
// returns nil once every goroutine it started has returned. It may be
// called once.
func (r *Remotes) Run(ctx context.Context) error {
	if !r.started.CompareAndSwap(false, true) {
		return fmt.Errorf("multicluster: Run called twice")
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	tick := time.NewTicker(r.opts.checkInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			r.stopAll(&wg)
			return nil
		case <-r.wake:
		case <-tick.C:
		}
		r.reconcile(ctx, &wg)
	}
}

// desired returns the cluster of each name the origins name; where two
// origins name one cluster, the origin that sorts first wins, and the
// others are returned in conflicts.
func (r *Remotes) desired() (map[string]Cluster, map[string]string, map[string][]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	want, origin, conflicts := map[string]Cluster{}, map[string]string{}, map[string][]string{}
	for _, o := range slices.Sorted(maps.Keys(r.origins)) {
		for _, c := range r.origins[o].clusters {
			if _, dup := want[c.Name]; dup {
				conflicts[c.Name] = append(conflicts[c.Name], o)
				continue
			}
			want[c.Name], origin[c.Name] = c, o
		}
	}
	return want, origin, conflicts
}

// reconcile brings what runs in line with the origins and the clusters'
// health: it starts, rotates, joins, expires and removes clusters.
func (r *Remotes) reconcile(ctx context.Context, wg *sync.WaitGroup) {
	want, origin, conflicts := r.desired()
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, st := range r.clusters {
		if _, ok := want[name]; !ok {
			r.removeLocked(wg, name, st)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		st := r.clusters[name]
		if st == nil {
			st = &state{}
			r.clusters[name] = st
		}
		st.origin, st.conflict = origin[name], conflicts[name]
		r.stepLocked(ctx, wg, want[name], st)
	}
}

// stepLocked moves one cluster's state a step towards c.
func (r *Remotes) stepLocked(ctx context.Context, wg *sync.WaitGroup, c Cluster, st *state) {
	now := r.opts.now()
	start := func() *member {
		st.gens++
		m := &member{cluster: c, gen: st.gens, health: &Health{now: r.opts.now}, started: now}
		if c.Name == r.opts.clusterName {
			m.err = fmt.Errorf("cluster %q: %w", c.Name, ErrLocalName)
			return m
		}
		r.opts.logger.Info("watching remote cluster", "cluster", c.Name, "origin", st.origin, "generation", st.gens)
		startMember(ctx, wg, r.g, r.opts.logger, m, r.poke)
		return m
	}
	switch {
	case st.active == nil:
		st.active = start()
	case st.active.err != nil && !sameConfig(st.active, c):
		// A member that could not be built serves nothing to keep.
		if st.next != nil {
			st.next.stop(wg)
			st.next = nil
		}
		st.active = start()
	case !sameConfig(st.active, c) && !sameConfig(st.next, c):
		if st.next != nil {
			st.next.stop(wg)
		}
		st.next = start()
	case st.next != nil && sameConfig(st.active, c):
		st.next.stop(wg) // rotated back before the new one synced
		st.next = nil
	}
	if st.next != nil && st.next.synced() {
		r.replaceLocked(wg, c.Name, st)
	}
	r.healthLocked(c.Name, st, now)
}

// replaceLocked swaps in the synced next member, in one transaction when
// the cluster is joined, then stops the old one.
func (r *Remotes) replaceLocked(wg *sync.WaitGroup, name string, st *state) {
	old := st.active
	st.active, st.next = st.next, nil
	if st.joined && !st.expired {
		// The same keys: the old generation's entries are replaced.
		r.joins.add(r.g, st.active.inputs)
	}
	// An expired cluster rejoins through healthLocked once the new
	// generation answers.
	old.stop(wg)
	r.opts.logger.Info("remote cluster's credentials replaced", "cluster", name, "generation", st.active.gen)
}

// healthLocked joins a synced cluster, flags stale one that has been
// unreachable past the grace (stalePolicy), and takes out (and later
// brings back) one that stays unreachable.
func (r *Remotes) healthLocked(name string, st *state, now time.Time) {
	m := st.active
	if !m.synced() {
		return
	}
	h := m.health.Snapshot()
	failing, v := h.FailingSince, r.opts.stale.judge(h, now)
	st.checked = now
	switch {
	case !st.joined:
		r.joins.add(r.g, m.inputs)
		st.joined = true
		r.opts.logger.Info("remote cluster joined", "cluster", name, "generation", m.gen)
	case !st.expired && v == expired:
		r.joins.remove(r.g, m.inputs)
		st.expired = true
		r.opts.logger.Warn("remote cluster unreachable too long; its items left the mesh until it answers",
			"cluster", name, "failingSince", failing, "staleTimeout", r.opts.stale.timeout)
	case st.expired && failing.IsZero():
		r.joins.add(r.g, m.inputs)
		st.expired = false
		r.opts.logger.Info("remote cluster answers again; rejoined", "cluster", name)
	}
	r.markStaleLocked(name, st, !st.expired && v == stale, failing)
}

// markStaleLocked flags the joined cluster's items stale in the inputs
// (sources.StaleCluster) while it does not answer, and clears the flag
// once it does, or once its items left the joins.
func (r *Remotes) markStaleLocked(name string, st *state, stale bool, since time.Time) {
	if stale == st.stale && (!stale || since.Equal(st.staleSince)) {
		return
	}
	st.stale, st.staleSince = stale, since
	r.joins.markStale(r.g, name, stale, since)
}

// removeLocked takes a cluster no origin names out of the joins and stops
// it.
func (r *Remotes) removeLocked(wg *sync.WaitGroup, name string, st *state) {
	if st.joined && !st.expired {
		r.joins.remove(r.g, st.active.inputs)
	}
	r.markStaleLocked(name, st, false, time.Time{})
	st.active.stop(wg)
	if st.next != nil {
		st.next.stop(wg)
	}
	delete(r.clusters, name)
	r.opts.logger.Info("remote cluster removed", "cluster", name)
}

// stopAll stops every cluster, leaving the joins as they are: the graph
// stops with them.
func (r *Remotes) stopAll(wg *sync.WaitGroup) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, st := range r.clusters {
		st.active.stop(wg)
		if st.next != nil {
			st.next.stop(wg)
		}
	}
}

// sameConfig reports whether m was built from c's kubeconfig.
func sameConfig(m *member, c Cluster) bool {
	return m != nil && string(m.cluster.Kubeconfig) == string(c.Kubeconfig)
}
