package debugui

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/meshd/meshd/internal/leakcheck"
)

// sseEvent is one server-sent event.
type sseEvent struct {
	name string
	data string
}

// sseReader parses a text/event-stream body.
type sseReader struct{ sc *bufio.Scanner }

func newSSEReader(r io.Reader) *sseReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	return &sseReader{sc: sc}
}

// next returns the next event with a name; comments and the retry field
// are skipped.
func (r *sseReader) next() (sseEvent, error) {
	var ev sseEvent
	for r.sc.Scan() {
		line := r.sc.Text()
		switch {
		case line == "":
			if ev.name != "" {
				return ev, nil
			}
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.data += strings.TrimPrefix(line, "data: ")
		}
	}
	if err := r.sc.Err(); err != nil {
		return ev, err
	}
	return ev, io.EOF
}

// until reads events until one named name satisfies ok, and returns it
// decoded.
func until[T any](t *testing.T, r *sseReader, name string, ok func(T) bool) T {
	t.Helper()
	for {
		ev, err := r.next()
		if err != nil {
			t.Fatalf("waiting for a %q event: %v", name, err)
		}
		if ev.name != name {
			continue
		}
		var v T
		if err := json.Unmarshal([]byte(ev.data), &v); err != nil {
			t.Fatalf("decoding %q event %s: %v", name, ev.data, err)
		}
		if ok(v) {
			return v
		}
	}
}

// serveStream serves h and opens its event stream; stop closes both. The
// stream's timeout only guards against a hang: nothing measures time.
func serveStream(t *testing.T, h http.Handler) (events *sseReader, stop func()) {
	t.Helper()
	srv := httptest.NewServer(h)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	resp, events := openStream(t, ctx, srv)
	return events, func() {
		resp.Body.Close()
		cancel()
		srv.Close()
	}
}

// openStream starts an event stream; the request ends with ctx.
func openStream(t *testing.T, ctx context.Context, srv *httptest.Server) (*http.Response, *sseReader) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/debug/api/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q, want text/event-stream", ct)
	}
	return resp, newSSEReader(resp.Body)
}

func sizeOf(s GraphSummary, name string) int {
	for _, c := range s.Collections {
		if c.Name == name {
			return c.Size
		}
	}
	return -1
}

func TestStreamDeliversChanges(t *testing.T) {
	defer leakcheck.VerifyNone(t)
	now := time.Now()
	f := newFixture()
	proxies := newFakeProxies(now)
	h := New(f.g, WithPollInterval(5*time.Millisecond), WithProxies(proxies), WithProblems(newFakeProblems(now)))
	events, stop := serveStream(t, h)
	defer stop()

	// The first poll sends the current state of all three.
	var names []string
	for range 3 {
		ev, err := events.next()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, ev.name)
	}
	if strings.Join(names, ",") != "graph,proxies,problems" {
		t.Fatalf("first events %v, want graph, proxies, problems", names)
	}

	// A write to a static collection arrives as a new summary with the
	// new version and sizes, down to the derived outputs.
	before := f.g.Version()
	f.pods.Set(fxPod{Name: "web-99", Namespace: "default", Node: "node-1", IP: "10.0.0.99", Labels: map[string]string{"app": "web"}})
	s := until(t, events, "graph", func(s GraphSummary) bool { return s.Version > before })
	if sizeOf(s, "pods") != 13 || sizeOf(s, "workloads") != 13 {
		t.Errorf("after adding a pod: pods %d, workloads %d; want 13, 13", sizeOf(s, "pods"), sizeOf(s, "workloads"))
	}

	// A change in the registry arrives as a proxies event.
	ps := proxies.Proxies()
	ps[1].State = ProxyDisconnected
	proxies.set(ps)
	until(t, events, "proxies", func(r ProxiesResult) bool { return len(r.Proxies) == 2 && r.Proxies[1].Verdict == "disconnected" })
}

// leakCheckedServer serves the handler of a fixture, polling every 5ms,
// until the test ends; then, once the server has closed and waited for
// its handlers, it checks that no goroutine is left.
func leakCheckedServer(t *testing.T) (*Handler, *httptest.Server) {
	t.Helper()
	t.Cleanup(func() { leakcheck.VerifyNone(t) })
	h := New(newFixture().g, WithPollInterval(5*time.Millisecond))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, srv
}

func TestStreamEndsOnClose(t *testing.T) {
	h, srv := leakCheckedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, events := openStream(t, ctx, srv)
	defer resp.Body.Close()
	if ev, err := events.next(); err != nil || ev.name != "graph" {
		t.Fatalf("first event %v, %v; want graph", ev, err)
	}
	h.Close()
	// The handler returns, so the body ends instead of blocking.
	for {
		if _, err := events.next(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("stream ended with %v, want EOF", err)
			}
			break
		}
	}

	// A stream opened after Close sends its first state and ends.
	resp2, events2 := openStream(t, ctx, srv)
	defer resp2.Body.Close()
	if ev, err := events2.next(); err != nil || ev.name != "graph" {
		t.Fatalf("first event after Close %v, %v; want graph", ev, err)
	}
	if _, err := events2.next(); !errors.Is(err, io.EOF) {
		t.Fatalf("stream after Close: %v, want EOF", err)
	}
}

func TestStreamEndsWithClient(t *testing.T) {
	_, srv := leakCheckedServer(t)
	for range 3 {
		ctx, cancel := context.WithCancel(context.Background())
		resp, events := openStream(t, ctx, srv)
		if _, err := events.next(); err != nil {
			t.Fatal(err)
		}
		cancel()
		resp.Body.Close()
	}
	// srv.Close (a cleanup) waits for the handlers; goleak then finds no
	// stream goroutine left.
}
