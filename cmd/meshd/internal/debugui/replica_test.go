package debugui

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/meshd/meshd/internal/leakcheck"
)

func TestReplica(t *testing.T) {
	f := newFixture()
	since := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rep := newFakeReplica(Replica{Lease: "mesh-system/meshd", Identity: "meshd-0_aa", Leading: true, Leader: "meshd-0_aa", Since: since, Terms: 2})
	h := New(f.g, WithReplica(rep.get))

	got := getJSON[ReplicaResult](t, h, "/debug/api/replica", http.StatusOK)
	if !got.Available || got.Replica == nil {
		t.Fatalf("replica %+v, want available", got)
	}
	if r := *got.Replica; r != rep.get() {
		t.Errorf("replica %+v, want %+v", r, rep.get())
	}
	// The wire names are the documented camelCase ones.
	_, body := get(t, h, "/debug/api/replica")
	for _, want := range []string{`"available":true`, `"lease":"mesh-system/meshd"`, `"identity":"meshd-0_aa"`, `"leading":true`, `"leader":"meshd-0_aa"`, `"since":"2026-03-01T12:00:00Z"`, `"terms":2`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("body %s lacks %s", body, want)
		}
	}

	// Each request asks the view afresh.
	rep.set(Replica{Lease: "mesh-system/meshd", Identity: "meshd-0_aa", Leader: "meshd-1_bb", Since: since.Add(time.Minute), Terms: 2})
	if got := getJSON[ReplicaResult](t, h, "/debug/api/replica", http.StatusOK); got.Replica == nil || got.Replica.Leading || got.Replica.Leader != "meshd-1_bb" {
		t.Errorf("after losing the lease: %+v, want a standby led by meshd-1_bb", got.Replica)
	}

	// Without leader election the API says so, and names nothing.
	bare := New(f.g)
	if got := getJSON[ReplicaResult](t, bare, "/debug/api/replica", http.StatusOK); got.Available || got.Replica != nil {
		t.Errorf("replica without a view: %+v, want available=false", got)
	}
	if _, body := get(t, bare, "/debug/api/replica"); strings.TrimSpace(string(body)) != `{"available":false}` {
		t.Errorf("body without a view %s, want {\"available\":false}", body)
	}
}

func TestStreamDeliversReplica(t *testing.T) {
	defer leakcheck.VerifyNone(t)
	f := newFixture()
	rep := newFakeReplica(Replica{Lease: "default/meshd", Identity: "meshd-1_bb", Leader: "meshd-0_aa", Since: time.Now(), Terms: 0})
	h := New(f.g, WithPollInterval(5*time.Millisecond), WithReplica(rep.get))
	events, stop := serveStream(t, h)
	defer stop()

	first := until(t, events, "replica", func(ReplicaResult) bool { return true })
	if !first.Available || first.Replica == nil || first.Replica.Leading || first.Replica.Leader != "meshd-0_aa" {
		t.Fatalf("first replica event %+v, want a standby led by meshd-0_aa", first)
	}
	// A won election arrives as a new event.
	rep.set(Replica{Lease: "default/meshd", Identity: "meshd-1_bb", Leading: true, Leader: "meshd-1_bb", Since: time.Now(), Terms: 1})
	until(t, events, "replica", func(r ReplicaResult) bool { return r.Replica != nil && r.Replica.Leading && r.Replica.Terms == 1 })
}

func TestStreamWithoutReplica(t *testing.T) {
	defer leakcheck.VerifyNone(t)
	f := newFixture()
	h := New(f.g, WithPollInterval(5*time.Millisecond))
	events, stop := serveStream(t, h)
	defer stop()
	// The first poll sends what the handler has; then ending the stream
	// shows what was sent, and no replica event was among it.
	if ev, err := events.next(); err != nil || ev.name != "graph" {
		t.Fatalf("first event %v, %v; want graph", ev, err)
	}
	h.Close()
	for {
		ev, err := events.next()
		if err != nil {
			break
		}
		if ev.name == "replica" {
			t.Fatalf("a replica event without a replica view: %s", ev.data)
		}
	}
}
