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
	if !h.startStream(w, rc) {
		return
	}
	ticker := time.NewTicker(h.opts.poll)
	defer ticker.Stop()
	p := &streamPoller{h: h, w: w, sources: h.streamSources(), last: map[string][]byte{}, moving: true}
	for {
		sent, err := p.sendChanges()
		if err == nil {
			err = p.flush(rc, sent)
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

// startStream writes the event stream's headers and its retry hint, and
// reports whether the stream can go on.
func (h *Handler) startStream(w http.ResponseWriter, rc *http.ResponseController) bool {
	// A server's WriteTimeout would cut the stream off; it lives as long as
	// the page. Servers that cannot lift the deadline keep it.
	_ = rc.SetWriteDeadline(time.Time{})
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// The page reconnects after a failure; tell it to do so quickly.
	if _, err := fmt.Fprint(w, "retry: 1000\n\n"); err != nil {
		return false
	}
	if err := rc.Flush(); err != nil {
		h.opts.log.Debug("debug UI: event stream cannot flush", "error", err)
		return false
	}
	return true
}

// streamSource is one event the stream sends besides "graph", with the
// value it sends.
type streamSource struct {
	event string
	value func() any
}

// streamSources returns the events the handler has a source for, in the
// order each poll sends them.
func (h *Handler) streamSources() []streamSource {
	var out []streamSource
	if h.opts.proxies != nil {
		out = append(out, streamSource{"proxies", func() any { return h.proxies() }})
	}
	if h.opts.problems != nil {
		out = append(out, streamSource{"problems", func() any { return h.problems() }})
	}
	if h.opts.replica != nil {
		out = append(out, streamSource{"replica", func() any { return h.replica() }})
	}
	if h.opts.clusters != nil {
		out = append(out, streamSource{"clusters", func() any { return h.clusters() }})
	}
	return out
}

// streamPoller remembers what one stream last sent, so that each poll sends
// only what changed. It belongs to the request's goroutine.
type streamPoller struct {
	h           *Handler
	w           http.ResponseWriter
	sources     []streamSource
	sentVersion uint64
	lastGraph   []byte
	last        map[string][]byte // by event
	moving      bool              // the last summary had a non-zero rate, or none was sent yet
	quiet       int               // polls since the last write
}

// sendChanges writes the events whose value changed since the last poll,
// and reports whether it wrote any.
func (p *streamPoller) sendChanges() (bool, error) {
	h := p.h
	sent := false
	var err error
	if v := h.g.Version(); p.moving || v != p.sentVersion || p.lastGraph == nil {
		s := h.summary(time.Now())
		p.sentVersion, p.moving = s.Version, anyMoving(s)
		sent, p.lastGraph, err = h.sendIfChanged(p.w, "graph", s, p.lastGraph)
	}
	for _, src := range p.sources {
		if err != nil {
			break
		}
		var ok bool
		ok, p.last[src.event], err = h.sendIfChanged(p.w, src.event, src.value(), p.last[src.event])
		sent = sent || ok
	}
	return sent, err
}

// flush sends what a poll wrote; after keepAlive polls that wrote nothing it
// writes a comment first, so that a vanished client is noticed.
func (p *streamPoller) flush(rc *http.ResponseController, sent bool) error {
	if !sent {
		if p.quiet++; p.quiet < keepAlive {
			return nil
		}
		if _, err := fmt.Fprint(p.w, ": keep-alive\n\n"); err != nil {
			return err
		}
	}
	p.quiet = 0
	return rc.Flush()
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
