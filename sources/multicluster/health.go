package multicluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Health records how a cluster's API server answers: when a list and a
// watch last succeeded, the last error, and since when every request has
// failed. It sees every request of a client whose transport it wraps
// (Wrap), so it needs nothing from the informers. The zero value is ready;
// it is safe for concurrent use.
type Health struct {
	now func() time.Time

	mu           sync.Mutex // guards following
	lastList     time.Time
	lastWatch    time.Time
	lastError    string
	lastErrorAt  time.Time
	failingSince time.Time // zero while the last request succeeded
	errors       uint64
	consecutive  uint64 // failed requests since the last success
}

// HealthSnapshot is what a Health recorded, at one moment.
type HealthSnapshot struct {
	LastList  time.Time `json:"lastList,omitzero"`
	LastWatch time.Time `json:"lastWatch,omitzero"`
	LastError string    `json:"lastError,omitempty"`
	// LastErrorAt is when LastError happened.
	LastErrorAt time.Time `json:"lastErrorAt,omitzero"`
	// FailingSince is when requests began to fail, zero while the last
	// one succeeded.
	FailingSince time.Time `json:"failingSince,omitzero"`
	// Errors counts failed requests.
	Errors uint64 `json:"errors"`
	// ConsecutiveErrors counts the failed requests since the last one
	// that succeeded: zero while FailingSince is.
	ConsecutiveErrors uint64 `json:"consecutiveErrors"`
}

// Wrap returns rt with every request recorded in h; use it as a
// rest.Config's WrapTransport.
func (h *Health) Wrap(rt http.RoundTripper) http.RoundTripper {
	return healthTransport{next: rt, h: h}
}

// Snapshot returns what h has recorded.
func (h *Health) Snapshot() HealthSnapshot {
	h.mu.Lock()
	defer h.mu.Unlock()
	return HealthSnapshot{
		LastList: h.lastList, LastWatch: h.lastWatch,
		LastError: h.lastError, LastErrorAt: h.lastErrorAt,
		FailingSince: h.failingSince, Errors: h.errors, ConsecutiveErrors: h.consecutive,
	}
}

func (h *Health) clock() time.Time {
	if h.now != nil {
		return h.now()
	}
	return time.Now()
}

// success records an answered list, watch, or both: a streaming list
// (a watch that sends the initial state first) is both.
func (h *Health) success(list, watch bool) {
	now := h.clock()
	h.mu.Lock()
	defer h.mu.Unlock()
	if list {
		h.lastList = now
	}
	if watch {
		h.lastWatch = now
	}
	h.failingSince, h.consecutive = time.Time{}, 0
}

func (h *Health) failure(err error) {
	now := h.clock()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.errors++
	h.consecutive++
	h.lastError, h.lastErrorAt = err.Error(), now
	if h.failingSince.IsZero() {
		h.failingSince = now
	}
}

type healthTransport struct {
	next http.RoundTripper
	h    *Health
}

// RoundTrip records the outcome of GET requests, the lists and watches of
// informers. A request the caller cancelled says nothing of the server.
// Answers that are errors of the client's asking (404, 410 Gone of an old
// resource version) count as answered; the server's own failures (5xx),
// refused credentials (401, 403) and transport errors count as failures.
func (t healthTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if req.Method != http.MethodGet {
		return resp, err
	}
	switch {
	case err != nil:
		if !errors.Is(err, context.Canceled) && req.Context().Err() == nil {
			t.h.failure(err)
		}
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		t.h.failure(fmt.Errorf("%s %s: %s", req.Method, req.URL.Path, resp.Status))
	default:
		q := req.URL.Query()
		watch := q.Get("watch") == "true"
		t.h.success(!watch || q.Get("sendInitialEvents") == "true", watch)
	}
	return resp, err
}
