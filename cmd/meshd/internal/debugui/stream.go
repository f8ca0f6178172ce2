package debugui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// keepAlive is how many quiet polls pass before the stream sends a comment,
// so that a vanished client is noticed by the failing write.
const keepAlive = 30

// serveStream pushes server-sent events: "graph" (a GraphSummary) whenever
// the graph's version changes or, while collections have a non-zero event
// rate, whenever the rates do; "proxies" (a ProxiesResult), "problems"
// (a ProblemsResult) and "replica" (a ReplicaResult) whenever they change,
// each only when the handler has a source for it. The first poll sends
// every one it has.
// It runs in the request's goroutine and returns when the request's
// context ends, a write fails or Close is called.
func (h *Handler) serveStream(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	// A server's WriteTimeout would cut the stream off; it lives as long as
	// the page. Servers that cannot lift the deadline keep it.
	_ = rc.SetWriteDeadline(time.Time{})
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// The page reconnects after a failure; tell it to do so quickly.
	if _, err := fmt.Fprint(w, "retry: 1000\n\n"); err != nil {
		return
	}
	if err := rc.Flush(); err != nil {
		h.opts.log.Debug("debug UI: event stream cannot flush", "error", err)
		return
	}

	ticker := time.NewTicker(h.opts.poll)
	defer ticker.Stop()
	var (
		sentVersion uint64
		lastGraph   []byte
		lastProxies []byte
		lastProbs   []byte
		lastReplica []byte
		moving      = true // the last summary had a non-zero rate, or none was sent yet
		quiet       int
	)
	for {
		sent := false
		var err error
		if v := h.g.Version(); moving || v != sentVersion || lastGraph == nil {
			s := h.summary(time.Now())
			sentVersion, moving = s.Version, anyMoving(s)
			sent, lastGraph, err = h.sendIfChanged(w, "graph", s, lastGraph)
		}
		if err == nil && h.opts.proxies != nil {
			var ok bool
			ok, lastProxies, err = h.sendIfChanged(w, "proxies", h.proxies(), lastProxies)
			sent = sent || ok
		}
		if err == nil && h.opts.problems != nil {
			var ok bool
			ok, lastProbs, err = h.sendIfChanged(w, "problems", h.problems(), lastProbs)
			sent = sent || ok
		}
		if err == nil && h.opts.replica != nil {
			var ok bool
			ok, lastReplica, err = h.sendIfChanged(w, "replica", h.replica(), lastReplica)
			sent = sent || ok
		}
		if err == nil && !sent {
			if quiet++; quiet >= keepAlive {
				quiet = 0
				_, err = fmt.Fprint(w, ": keep-alive\n\n")
				sent = true
			}
		}
		if err == nil && sent {
			quiet = 0
			err = rc.Flush()
		}
		if err != nil {
			h.opts.log.Debug("debug UI: event stream ended", "error", err)
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-h.done:
			return
		case <-ticker.C:
		}
	}
}

// sendIfChanged writes v as an event unless it encodes to last; it returns
// whether it wrote, and the encoding to compare the next value with.
func (h *Handler) sendIfChanged(w http.ResponseWriter, event string, v any, last []byte) (bool, []byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return false, last, fmt.Errorf("encoding %s event: %w", event, err)
	}
	if bytes.Equal(b, last) {
		return false, last, nil
	}
	// json.Marshal writes no newline, so the payload is one data line.
	_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	return true, b, err
}

func anyMoving(s GraphSummary) bool {
	for _, c := range s.Collections {
		if c.EventRate != 0 {
			return true
		}
	}
	return false
}
