package xds_test

import (
	"fmt"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest"
)

// churn writes a new address to CLA "a" every interval for d, while the
// stream c, subscribed to it, ACKs every response. It returns how many
// pushes arrived during the churn, and the longest any write waited for a
// push carrying it or a later one.
func churn(t *testing.T, f *fixture, c *xdstest.SotW, interval, d time.Duration) (pushes int, worst time.Duration) {
	t.Helper()
	var written []time.Time // written[i]: when address i was written
	seen := 0               // addresses 0 … seen-1 have been pushed
	tick := time.NewTicker(interval)
	defer tick.Stop()
	end := time.After(d)
	for {
		select {
		case <-tick.C:
			f.eds.Set(cla("a", fmt.Sprintf("10.0.%d.%d:80", len(written)/256, len(written)%256)))
			written = append(written, time.Now())
		case r := <-c.Responses():
			pushes++
			var hi, lo int
			addr := claOf(t, r.Resources, "a").Endpoints[0].LbEndpoints[0].GetEndpoint().Address.GetSocketAddress().Address
			if _, err := fmt.Sscanf(addr, "10.0.%d.%d", &hi, &lo); err == nil {
				for ; seen <= hi*256+lo && seen < len(written); seen++ {
					worst = max(worst, time.Since(written[seen]))
				}
			}
			c.Ack(r, "a")
		case <-end:
			return pushes, worst
		}
	}
}

// subscribed opens a stream subscribed to CLA "a" and takes its first
// response.
func subscribed(t *testing.T, f *fixture) *xdstest.SotW {
	t.Helper()
	f.eds.Set(cla("a", "10.1.0.1:80"))
	c := xdstest.NewSotW(t, dial(t, f.addr), &corev3.Node{Id: "node-1"})
	c.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{"a"}})
	c.Ack(c.Recv(), "a")
	return c
}

// TestPacedPushesDuringChurn: a change every 5ms for two seconds reaches
// the stream about one window later, in at most one push per window; the
// debounce mode, whose quiet period the changes never leave, pushes
// nothing until its cap.
func TestPacedPushesDuringChurn(t *testing.T) {
	window := 50 * time.Millisecond
	const d = 2 * time.Second
	f := newFixture(t, xds.WithPushWindow(window))
	pushes, worst := churn(t, f, subscribed(t, f), 5*time.Millisecond, d)
	if max := int(d/window) + 2; pushes > max {
		t.Errorf("%d pushes in %v of churn, want at most %d (one per %v window)", pushes, d, max, window)
	}
	if pushes < 5 {
		t.Errorf("%d pushes in %v of churn, want about one per %v window", pushes, d, window)
	}
	// A window, plus the ten a push waits for the answer to the last one
	// (the test answers late when it waits for the CPU), plus slack for a
	// busy machine. A push held to the end of the churn would take 2 s.
	if limit := 11*window + time.Second; worst > limit {
		t.Errorf("a change waited %v for its push, want about the %v window (at most %v)", worst, window, limit)
	}

	// The churn pauses for less than the quiet period even when the test
	// waits for the CPU, and outlasts it twice.
	quiet := time.Second
	m := newFixture(t, xds.WithPushMode(xds.PushDebounce), xds.WithDebounce(quiet), xds.WithMaxDelay(time.Hour))
	if pushes, _ := churn(t, m, subscribed(t, m), 5*time.Millisecond, 2*quiet); pushes != 0 {
		t.Errorf("debounce mode: %d pushes while the changes never paused, want 0", pushes)
	}
}

// TestPacedPushWaitsForAnswer: a stream that has not answered its last
// response gets the next change once it answers, not before; one that
// never answers still gets it, ten windows after the unanswered response.
func TestPacedPushWaitsForAnswer(t *testing.T) {
	window := 50 * time.Millisecond
	f := newFixture(t, xds.WithPushWindow(window))
	f.eds.Set(cla("a", "10.1.0.1:80"))
	c := xdstest.NewSotW(t, dial(t, f.addr), &corev3.Node{Id: "node-1"})
	c.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{"a"}})
	first := c.Recv() // not answered yet

	f.eds.Set(cla("a", "10.1.0.2:80"))
	select {
	case r := <-c.Responses():
		t.Fatalf("pushed %v while the last response was unanswered", r.VersionInfo)
	case <-time.After(4 * window):
	}
	waitFor(t, "Stats.HeldPushes to count the held push", func() bool { return f.srv.Stats().HeldPushes > 0 })
	c.Ack(first, "a")
	second := c.Recv()
	if got := claOf(t, second.Resources, "a").Endpoints[0].LbEndpoints[0].GetEndpoint().Address.GetSocketAddress().Address; got != "10.1.0.2" {
		t.Fatalf("after the answer: %s, want 10.1.0.2", got)
	}

	// Mute now: the next change still comes, once the hold runs out.
	start := time.Now()
	f.eds.Set(cla("a", "10.1.0.3:80"))
	c.Recv()
	if waited := time.Since(start); waited < 5*window {
		t.Errorf("a mute stream was pushed to after %v, want it held about ten windows (%v)", waited, 10*window)
	}
}
