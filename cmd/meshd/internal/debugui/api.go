package debugui

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/meshd/meshd/cmd/meshd/internal/problem"
	"github.com/meshd/meshd/krt"
)

// GraphSummary is the answer of api/graph and the "graph" stream event:
// every collection without its event and error history, and every edge.
type GraphSummary struct {
	Version     uint64              `json:"version"`
	Collections []CollectionSummary `json:"collections"`
	Edges       []krt.Edge          `json:"edges"`
	// Stalled is the transformation running past krt's stall threshold,
	// with its goroutine's stack, while it lasts.
	Stalled *krt.Stall `json:"stalled,omitempty"`
	// Queue counts the queued writes (the informers' events): a backlog
	// waiting, and any dropped because they panicked.
	Queue krt.QueueInfo `json:"queue"`
}

// CollectionSummary is one node of the graph.
type CollectionSummary struct {
	ID       int    `json:"id"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Type     string `json:"type"`
	Size     int    `json:"size"`
	Synced   bool   `json:"synced"`
	Handlers int    `json:"handlers"`

	Recomputes    uint64 `json:"recomputes"`
	EventsEmitted uint64 `json:"eventsEmitted"`
	Errors        uint64 `json:"errors"`
	FailingInputs int    `json:"failingInputs"`
	Conflicts     int    `json:"conflicts"`

	// EventRate is events per second over the last rateWindow.
	EventRate float64 `json:"eventRate"`
	// LastError is the message of the most recent recorded error.
	LastError string `json:"lastError,omitempty"`
	// Problems counts the current problems that name this collection
	// (problem.Problem.Collection), such as rejected routes.
	Problems int `json:"problems,omitempty"`
}

// CollectionDetail is the answer of api/collections/{name}.
type CollectionDetail struct {
	krt.CollectionInfo
	EventRate   float64 `json:"eventRate"`
	Upstreams   []Link  `json:"upstreams"`
	Downstreams []Link  `json:"downstreams"`
}

// Link is one edge seen from one of its ends: the collection at the other
// end, how it is read (primary, fetch, index, join) and, for fetch and index
// edges, how many recorded reads stand behind it.
type Link struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Reads int    `json:"reads,omitempty"`
}

// ItemsPage is the answer of api/collections/{name}/items.
type ItemsPage struct {
	Collection string `json:"collection"`
	Prefix     string `json:"prefix"`
	Offset     int    `json:"offset"`
	Limit      int    `json:"limit"`
	// Total is the number of items whose keys start with Prefix.
	Total int        `json:"total"`
	Items []ItemJSON `json:"items"`
}

// ItemJSON is one item with its encoded value.
type ItemJSON struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

// ExplainResult is the answer of api/explain: an explanation for each
// collection that holds the key.
type ExplainResult struct {
	Key     string        `json:"key"`
	Results []Explanation `json:"results"`
}

// Explanation is krt's explanation with the current values of the output
// and of the input that produced it.
type Explanation struct {
	krt.Explanation
	Value      json.RawMessage `json:"value,omitempty"`
	InputValue json.RawMessage `json:"inputValue,omitempty"`
}

// ProxiesResult is the answer of api/proxies and the "proxies" stream event.
type ProxiesResult struct {
	// Available is false when the handler has no Proxies (no xDS server).
	Available bool         `json:"available"`
	Proxies   []ProxyEntry `json:"proxies"`
}

// ProxyEntry is a ProxyStatus with its Verdict.
type ProxyEntry struct {
	ProxyStatus
	Verdict string `json:"verdict"`
}

// ProblemsResult is the answer of api/problems and the "problems" stream
// event.
type ProblemsResult struct {
	// Available is false when the handler has no Problems.
	Available bool              `json:"available"`
	Problems  []problem.Problem `json:"problems"`
}

// Items pages: the default and the largest page size.
const (
	defaultLimit = 50
	maxLimit     = 1000
)

func (h *Handler) summary(now time.Time) GraphSummary {
	info := h.g.Describe()
	rates := h.rates.observe(now, info.Collections)
	problems := h.problemsByCollection()
	s := GraphSummary{Version: info.Version, Collections: make([]CollectionSummary, len(info.Collections)), Edges: info.Edges, Stalled: info.Stalled, Queue: info.Queue}
	if s.Edges == nil {
		s.Edges = []krt.Edge{}
	}
	for i, c := range info.Collections {
		cs := CollectionSummary{
			ID: c.ID, Name: c.Name, Kind: c.Kind, Type: c.Type, Size: c.Size, Synced: c.Synced, Handlers: c.Handlers,
			Recomputes: c.Recomputes, EventsEmitted: c.EventsEmitted,
			Errors: c.Errors, FailingInputs: c.FailingInputs, Conflicts: c.Conflicts,
			EventRate: round2(rates[c.ID]),
			Problems:  problems[c.Name],
		}
		if n := len(c.RecentErrors); n > 0 {
			cs.LastError = RedactString(latestError(c.RecentErrors).Error)
		}
		s.Collections[i] = cs
	}
	return s
}

// latestError returns the most recent of a non-empty list of records,
// whatever order the engine keeps them in.
func latestError(errs []krt.ErrorRecord) krt.ErrorRecord {
	last := errs[0]
	for _, e := range errs[1:] {
		if !e.Time.Before(last.Time) {
			last = e
		}
	}
	return last
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

func (h *Handler) serveGraph(w http.ResponseWriter, r *http.Request) {
	h.writeJSON(w, h.summary(time.Now()))
}

func (h *Handler) serveCollection(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	info := h.g.Describe()
	rates := h.rates.observe(time.Now(), info.Collections)
	names := make(map[int]string, len(info.Collections))
	var found *krt.CollectionInfo
	for i, c := range info.Collections {
		names[c.ID] = c.Name
		if c.Name == name {
			found = &info.Collections[i]
		}
	}
	if found == nil {
		writeError(w, http.StatusNotFound, fmt.Sprintf("collection %q not found", name))
		return
	}
	d := CollectionDetail{CollectionInfo: *found, EventRate: round2(rates[found.ID]), Upstreams: []Link{}, Downstreams: []Link{}}
	d.RecentErrors = redactErrors(d.RecentErrors)
	for _, e := range info.Edges {
		if e.To == found.ID {
			d.Upstreams = append(d.Upstreams, Link{Name: names[e.From], Kind: e.Kind, Reads: e.Reads})
		}
		if e.From == found.ID {
			d.Downstreams = append(d.Downstreams, Link{Name: names[e.To], Kind: e.Kind, Reads: e.Reads})
		}
	}
	h.writeJSON(w, d)
}

func (h *Handler) serveItems(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	q := r.URL.Query()
	offset, err := intParam(q.Get("offset"), 0)
	if err != nil {
		writeError(w, http.StatusBadRequest, "offset: "+err.Error())
		return
	}
	limit, err := intParam(q.Get("limit"), defaultLimit)
	if err != nil {
		writeError(w, http.StatusBadRequest, "limit: "+err.Error())
		return
	}
	switch {
	case limit == 0:
		limit = defaultLimit
	case limit > maxLimit:
		limit = maxLimit
	}
	prefix := q.Get("prefix")
	items, total, err := h.g.Items(name, prefix, offset, limit)
	if err != nil {
		h.writeGraphError(w, err)
		return
	}
	page := ItemsPage{Collection: name, Prefix: prefix, Offset: offset, Limit: limit, Total: total, Items: make([]ItemJSON, len(items))}
	for i, it := range items {
		page.Items[i] = ItemJSON{Key: it.Key, Value: encodeItem(it.Value)}
	}
	h.writeJSON(w, page)
}

// intParam parses a non-negative integer query parameter, def when absent.
func intParam(s string, def int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("not an integer: %q", s)
	}
	if n < 0 {
		return 0, fmt.Errorf("negative: %d", n)
	}
	return n, nil
}

func (h *Handler) writeGraphError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, krt.ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, krt.ErrBusy):
		// A transformation holds the graph: say which, and that a retry
		// later may succeed.
		writeError(w, http.StatusServiceUnavailable, err.Error())
	default:
		writeError(w, http.StatusInternalServerError, err.Error())
	}
}

func (h *Handler) serveExplain(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	key, collection := q.Get("key"), q.Get("collection")
	if key == "" {
		writeError(w, http.StatusBadRequest, "the key parameter is required")
		return
	}
	res := ExplainResult{Key: key, Results: []Explanation{}}
	if collection != "" {
		e, err := h.g.Explain(collection, key)
		if err != nil {
			h.writeGraphError(w, err)
			return
		}
		res.Results = append(res.Results, h.withValues(e))
		h.writeJSON(w, res)
		return
	}
	for _, c := range h.g.Describe().Collections {
		e, err := h.g.Explain(c.Name, key)
		if errors.Is(err, krt.ErrBusy) { // every other collection would wait as long
			h.writeGraphError(w, err)
			return
		}
		if err != nil {
			continue // not in this collection (or the collection just went away)
		}
		res.Results = append(res.Results, h.withValues(e))
	}
	if len(res.Results) == 0 {
		writeError(w, http.StatusNotFound, fmt.Sprintf("key %q not found in any collection", key))
		return
	}
	h.writeJSON(w, res)
}

func (h *Handler) withValues(e krt.Explanation) Explanation {
	out := Explanation{Explanation: e}
	if le := e.LastError; le != nil {
		r := redactErrors([]krt.ErrorRecord{*le})[0]
		out.LastError = &r
	}
	if v, ok := h.itemValue(e.Collection, e.Key); ok {
		out.Value = v
	}
	if e.Input != "" && e.InputFrom != "" {
		if v, ok := h.itemValue(e.InputFrom, e.Input); ok {
			out.InputValue = v
		}
	}
	return out
}

// itemValue returns the encoded item under exactly key.
func (h *Handler) itemValue(collection, key string) (json.RawMessage, bool) {
	// Among the keys starting with key, key itself sorts first.
	items, _, err := h.g.Items(collection, key, 0, 1)
	if err != nil || len(items) == 0 || items[0].Key != key {
		return nil, false
	}
	return encodeItem(items[0].Value), true
}

func (h *Handler) proxies() ProxiesResult {
	if h.opts.proxies == nil {
		return ProxiesResult{Proxies: []ProxyEntry{}}
	}
	ps := h.opts.proxies.Proxies()
	res := ProxiesResult{Available: true, Proxies: make([]ProxyEntry, len(ps))}
	for i, p := range ps {
		res.Proxies[i] = ProxyEntry{ProxyStatus: redactProxy(p), Verdict: p.Verdict()}
	}
	return res
}

func (h *Handler) serveProxies(w http.ResponseWriter, r *http.Request) {
	h.writeJSON(w, h.proxies())
}

func (h *Handler) serveConfigDump(w http.ResponseWriter, r *http.Request) {
	if h.opts.proxies == nil {
		writeError(w, http.StatusNotFound, "no xDS server")
		return
	}
	id := r.PathValue("id")
	dump, err := h.opts.proxies.ConfigDump(id)
	if err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, ErrNotFound) {
			status = http.StatusNotFound
		}
		writeError(w, status, fmt.Sprintf("config dump of %q: %v", id, err))
		return
	}
	h.writeJSON(w, encodeItem(dump))
}

// problems returns the current problems, errors before warnings, each
// group in the order the sources report them.
func (h *Handler) problems() ProblemsResult {
	if h.opts.problems == nil {
		return ProblemsResult{Problems: []problem.Problem{}}
	}
	ps := h.opts.problems.Problems()
	out := make([]problem.Problem, len(ps))
	for i, p := range ps {
		p.Object, p.Error = RedactString(p.Object), RedactString(p.Error)
		out[i] = p
	}
	slices.SortStableFunc(out, func(a, b problem.Problem) int {
		return cmp.Compare(severityRank(a.Severity), severityRank(b.Severity))
	})
	return ProblemsResult{Available: true, Problems: out}
}

// severityRank orders severities, the most severe first; empty is an
// error.
func severityRank(s problem.Severity) int {
	if s == problem.SeverityWarning {
		return 1
	}
	return 0
}

// problemsByCollection counts the current problems per graph node they
// name.
func (h *Handler) problemsByCollection() map[string]int {
	if h.opts.problems == nil {
		return nil
	}
	out := map[string]int{}
	for _, p := range h.opts.problems.Problems() {
		if p.Collection != "" {
			out[p.Collection]++
		}
	}
	return out
}

func (h *Handler) serveProblems(w http.ResponseWriter, r *http.Request) {
	h.writeJSON(w, h.problems())
}
