package debugui

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/meshd/meshd/cmd/meshd/internal/problem"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources/multicluster"
)

// Option configures a Handler.
type Option func(*options)

type options struct {
	prefix   string
	proxies  Proxies
	problems problem.Lister
	replica  func() Replica
	clusters func() []multicluster.ClusterStatus
	// localCluster is the local cluster's name, beside clusters.
	localCluster string
	log          *slog.Logger
	poll         time.Duration
}

// WithPrefix sets the path the handler is mounted at; it must start and end
// with "/". Default: "/debug/".
func WithPrefix(prefix string) Option { return func(o *options) { o.prefix = prefix } }

// WithProxies sets the xDS server view behind the Proxies tab and the
// api/proxies routes. Default: none; the tab says there is no xDS server.
func WithProxies(p Proxies) Option { return func(o *options) { o.proxies = p } }

// WithProblems sets the source problems behind the Problems tab.
// Default: none; the tab says no source reports problems.
func WithProblems(p problem.Lister) Option { return func(o *options) { o.problems = p } }

// WithReplica sets the view of the leader election that the badge in the
// page's header and api/replica show. The function is called from request
// goroutines, every poll interval while an event stream is open: it must be
// safe for concurrent use and cheap. Default: none; no badge shows.
func WithReplica(f func() Replica) Option { return func(o *options) { o.replica = f } }

// WithLogger sets the logger for failures to encode or write a response.
// Default: discard.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithPollInterval sets how often an event stream checks the graph version,
// the proxies, the problems and the replica for changes. Default: 500ms.
func WithPollInterval(d time.Duration) Option { return func(o *options) { o.poll = d } }

// Handler serves the debug UI and its APIs for one graph. Create it with New.
type Handler struct {
	g    *krt.Graph
	opts options
	mux  *http.ServeMux

	rates rateTracker

	closeOnce sync.Once
	done      chan struct{} // closed by Close: ends every event stream
}

// New returns a handler serving the debug UI of g under the prefix (see
// WithPrefix and the package documentation for the routes). It panics if
// the prefix does not start and end with "/", a programming error.
func New(g *krt.Graph, opts ...Option) *Handler {
	o := options{prefix: "/debug/", poll: 500 * time.Millisecond}
	for _, opt := range opts {
		opt(&o)
	}
	if !strings.HasPrefix(o.prefix, "/") || !strings.HasSuffix(o.prefix, "/") {
		panic("debugui: prefix " + o.prefix + " must start and end with /")
	}
	if o.log == nil {
		o.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h := &Handler{g: g, opts: o, mux: http.NewServeMux(), done: make(chan struct{})}
	h.rates.window = rateWindow
	h.routes()
	return h
}

func (h *Handler) routes() {
	p := h.opts.prefix
	h.mux.HandleFunc("GET "+p+"{$}", h.redirectToUI)
	h.mux.HandleFunc("GET "+p+"ui", h.serveIndex)
	h.mux.HandleFunc("GET "+p+"ui/{$}", h.redirectToUI)
	h.mux.Handle("GET "+p+"ui/", http.StripPrefix(p+"ui/", assetServer()))
	for _, a := range h.apis() {
		h.mux.HandleFunc("GET "+p+a.pattern, a.serve)
	}
	h.mux.HandleFunc("GET "+p+"api/{$}", h.serveAPIIndex)
	h.mux.HandleFunc(p+"api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such API: "+r.URL.Path+" (the APIs are listed at "+p+"api/)")
	})
}

// api is one JSON API: its route, relative to the prefix, and what it
// answers, which api/ lists.
type api struct {
	pattern, about string
	serve          http.HandlerFunc
}

// apis are the handler's APIs, in the order api/ lists them.
func (h *Handler) apis() []api {
	return []api{
		{"api/graph", "GraphSummary: every collection and edge", h.serveGraph},
		{"api/collections/{name}", "CollectionDetail: counters, recent events and errors, upstreams, downstreams", h.serveCollection},
		{"api/collections/{name}/items", "ItemsPage; query: prefix, offset, limit (default 50, max 1000)", h.serveItems},
		{"api/explain", "ExplainResult; query: key, and collection to look in one only", h.serveExplain},
		{"api/proxies", "ProxiesResult: the xDS proxies, why each closed, and their earlier connections", h.serveProxies},
		{"api/proxies/{id}/config", "the proxy's config dump", h.serveConfigDump},
		{"api/problems", "ProblemsResult: the sources' problems, errors first", h.serveProblems},
		{"api/replica", "ReplicaResult: this replica's role in the leader election", h.serveReplica},
		{"api/clusters", "ClustersResult: each remote cluster's sync state, last list and watch, errors", h.serveClusters},
		{"api/stream", `text/event-stream of "graph", "proxies", "problems", "replica" and "clusters" events`, h.serveStream},
	}
}

// APIIndex is the answer of api/: the APIs, as paths relative to the
// prefix (a {name} stands for a path segment, slashes escaped as %2F).
type APIIndex struct {
	APIs []APIEntry `json:"apis"`
}

// APIEntry is one API of APIIndex.
type APIEntry struct {
	Path  string `json:"path"`
	About string `json:"about"`
}

func (h *Handler) serveAPIIndex(w http.ResponseWriter, r *http.Request) {
	idx := APIIndex{}
	for _, a := range h.apis() {
		idx.APIs = append(idx.APIs, APIEntry{Path: h.opts.prefix + a.pattern, About: a.about})
	}
	h.writeJSON(w, idx)
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// Prefix returns the path the handler expects to be mounted at.
func (h *Handler) Prefix() string { return h.opts.prefix }

// UIPath returns the path of the page: the prefix followed by "ui".
func (h *Handler) UIPath() string { return h.opts.prefix + "ui" }

// RedirectHandler returns a handler for the binary's "/" that redirects
// exactly "/" to the page and answers 404 for any other path it is given.
func (h *Handler) RedirectHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		http.Redirect(w, r, h.UIPath(), http.StatusFound)
	})
}

// Close ends every open event stream and makes later ones end at once, so
// that http.Server.Shutdown, which waits for active requests, need not wait
// for them: register it with http.Server.RegisterOnShutdown. Safe to call
// more than once.
func (h *Handler) Close() { h.closeOnce.Do(func() { close(h.done) }) }

func (h *Handler) redirectToUI(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, h.UIPath(), http.StatusFound)
}
