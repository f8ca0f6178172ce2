package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/meshd/meshd/internal/leakcheck"
	"github.com/meshd/meshd/xds"
)

// TestMain runs the client process when the load test starts this
// binary as one (child.go), the tests otherwise.
func TestMain(m *testing.M) {
	childMain()
	leakcheck.VerifyTestMain(m)
}

// TestShortLoad runs the load test small: every client gets the changes,
// and the goroutines return to the baseline once the clients leave.
func TestShortLoad(t *testing.T) {
	c := config{streams: 100, services: 100, pods: 500, perClient: 5, duration: 3 * time.Second,
		rate: 50, pushMode: xds.PushPaced, window: 20 * time.Millisecond, debounce: 20 * time.Millisecond, maxDelay: 200 * time.Millisecond, retention: time.Minute, retained: 1000, seed: 1, timeout: 30 * time.Second, pingTimeout: time.Minute}
	if testing.Short() || raceEnabled {
		c.streams, c.duration, c.rate = 30, time.Second, 20
	}
	r, err := run(context.Background(), c)
	if r != nil {
		var b bytes.Buffer
		r.print(&b)
		t.Log("\n" + b.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	if r.changes == 0 || r.pushes == 0 || r.deliveries == 0 {
		t.Fatalf("%d changes, %d pushes, %d deliveries", r.changes, r.pushes, r.deliveries)
	}
	// Each change reaches every client subscribed to its service, unless
	// a later change to the same service came in the same round.
	if r.deliveries > r.changes*c.streams {
		t.Fatalf("%d deliveries of %d changes to %d clients", r.deliveries, r.changes, c.streams)
	}
	if r.goroutinesLeft > r.goroutinesBase {
		t.Fatalf("%d goroutines after the clients left, %d before", r.goroutinesLeft, r.goroutinesBase)
	}
}
