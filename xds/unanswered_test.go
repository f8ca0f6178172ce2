package xds_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	"github.com/meshd/meshd/internal/testrun"
	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest"
)

// logSink is a slog handler's writer that tests read while the server
// writes.
type logSink struct{ testrun.Buffer }

// lines returns the lines written so far that hold substr.
func (s *logSink) lines(substr string) []string {
	var out []string
	for _, l := range strings.Split(s.String(), "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return out
}

// TestUnansweredProxyIsReported: a proxy that leaves a response
// unanswered past WithUnansweredAfter is logged once, by node id, and
// counted; when it answers, that is logged too. A proxy that answers at
// once is never reported.
func TestUnansweredProxyIsReported(t *testing.T) {
	sink := &logSink{}
	logger := slog.New(slog.NewTextHandler(sink, &slog.HandlerOptions{Level: slog.LevelInfo}))
	f := newFixture(t, xds.WithLogger(logger), xds.WithUnansweredAfter(time.Second)) // live answers in time when busy
	f.eds.Set(cla("c1", "127.0.0.1:8080"))

	cc := dial(t, f.addr)
	mute := xdstest.NewSotW(t, cc, &corev3.Node{Id: "mute-proxy"})
	live := xdstest.NewSotW(t, cc, &corev3.Node{Id: "live-proxy"})
	for _, c := range []*xdstest.SotW{mute, live} {
		c.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{"c1"}})
	}
	first := mute.Recv()
	live.Ack(live.Recv(), "c1")

	deadline := time.Now().Add(10 * time.Second)
	for len(sink.lines("not answering")) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no warning about the unanswering proxy; log:\n%s", strings.Join(sink.lines(""), "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	warn := sink.lines("not answering")
	if len(warn) != 1 || !strings.Contains(warn[0], "level=WARN") || !strings.Contains(warn[0], "proxy=mute-proxy") {
		t.Fatalf("want one WARN naming mute-proxy, got %q", warn)
	}
	if got := f.srv.Stats().Unanswered; got != 1 {
		t.Fatalf("Stats.Unanswered = %d, want 1", got)
	}
	wantStale(t, f.srv, map[string]bool{"mute-proxy": true, "live-proxy": false})

	// More changes while it stays mute do not repeat the warning. (The
	// mute proxy gets them last: its push is held for its answer, up to
	// ten push windows.)
	f.eds.Set(cla("c1", "127.0.0.2:8080"))
	live.Ack(live.Recv(), "c1")
	mute.Recv()
	time.Sleep(1500 * time.Millisecond) // past the limit once more
	if n := len(sink.lines("not answering")); n != 1 {
		t.Fatalf("%d warnings for one mute spell, want 1", n)
	}

	// It answers: the oldest response is ACKed, then the newest.
	mute.Ack(first, "c1")
	mute.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{"c1"}, VersionInfo: "x", ResponseNonce: "2"})
	deadline = time.Now().Add(10 * time.Second)
	for len(sink.lines("answering again")) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no log that the proxy answers again; log:\n%s", strings.Join(sink.lines(""), "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if again := sink.lines("answering again"); !strings.Contains(again[0], "proxy=mute-proxy") {
		t.Fatalf("recovery line %q does not name mute-proxy", again[0])
	}
	wantStale(t, f.srv, map[string]bool{"mute-proxy": false})
	if l := sink.lines("live-proxy"); len(l) != 0 {
		t.Fatalf("the answering proxy was reported: %q", l)
	}
}

// wantStale checks which nodes the registry calls stale, as the UI and
// the stale metric do; a stale proxy is behind too.
func wantStale(t *testing.T, s *xds.Server, stale map[string]bool) {
	t.Helper()
	for node, want := range stale {
		if p := proxyByNode(t, s, node); p.Stale != want || (want && !p.Behind) {
			t.Errorf("%s: stale %v, behind %v; want stale %v", node, p.Stale, p.Behind, want)
		}
	}
}
