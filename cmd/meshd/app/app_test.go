package app

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshd/meshd/internal/testrun"
)

// running is an App started by start, with its log.
type running struct {
	app  *App
	base string // http://debug-addr
	log  *testrun.Buffer
	stop func() error
}

// start runs an App for cfg on free loopback ports and stops it at the end
// of the test. An address left empty or at its default becomes a free
// port: tests running at once, here and in other packages, must not
// contend for meshd's default ports.
func start(t *testing.T, cfg Config) *running {
	t.Helper()
	defaults := DefaultConfig()
	if cfg.XDSAddr == "" || cfg.XDSAddr == defaults.XDSAddr {
		cfg.XDSAddr = "127.0.0.1:0"
	}
	if cfg.DebugAddr == "" || cfg.DebugAddr == defaults.DebugAddr {
		cfg.DebugAddr = "127.0.0.2:0"
	}
	logs := &testrun.Buffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("Run did not return within 10s of cancel; log:\n%s", logs)
			}
		})
		return runErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return &running{app: a, base: "http://" + a.DebugAddr(), log: logs, stop: stop}
}

// get fetches path from the debug server.
func (r *running) get(t *testing.T, path string) (int, string) {
	t.Helper()
	c := http.Client{
		Timeout:       5 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := c.Get(r.base + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp.StatusCode, string(body)
}

// waitReady polls /readyz until it answers 200.
func (r *running) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, body := r.get(t, "/readyz")
		if code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %d %q after 20s", code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDebugEndpoints checks what the debug server serves: health, metrics,
// pprof, and the debug UI and its API, to which / redirects.
func TestDebugEndpoints(t *testing.T) {
	r := start(t, DefaultConfig())
	r.waitReady(t)

	tests := []struct {
		path     string
		wantCode int
		want     string
	}{
		{"/healthz", 200, "ok"},
		{"/readyz", 200, "ready"},
		{"/metrics", 200, "meshd_krt_graph_version"},
		{"/metrics", 200, "go_goroutines"},
		{"/debug/pprof/", 200, "goroutine"},
		{"/nope", 404, ""},
		{"/", http.StatusFound, ""},
		{"/debug/ui", 200, "<html"},
		{"/debug/api/graph", 200, `"collections"`},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			code, body := r.get(t, tc.path)
			if code != tc.wantCode || !strings.Contains(body, tc.want) {
				t.Errorf("GET %s = %d %.200q, want %d containing %q", tc.path, code, body, tc.wantCode, tc.want)
			}
		})
	}
	if err := r.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !strings.Contains(r.log.String(), "meshd serving") || !strings.Contains(r.log.String(), "meshd stopped") {
		t.Errorf("log lacks start or stop line:\n%s", r.log)
	}
}

func TestReadyzListsPending(t *testing.T) {
	r := start(t, DefaultConfig())
	block := make(chan struct{})
	r.app.ready.add("source test", block)
	code, body := r.get(t, "/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "source test") {
		t.Errorf("/readyz = %d %q, want 503 naming the source", code, body)
	}
	close(block)
	r.waitReady(t)
}

func TestNonLoopbackDebugWarns(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DebugAddr = "0.0.0.0:0"
	r := start(t, cfg)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.log.String(), "level=WARN") || !strings.Contains(r.log.String(), "beyond loopback") {
		t.Errorf("no warning for a debug server on all interfaces:\n%s", r.log)
	}
}

func TestNewFailsOnBusyPort(t *testing.T) {
	cfg := DefaultConfig()
	cfg.XDSAddr, cfg.DebugAddr = "127.0.0.1:0", "127.0.0.1:0"
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	cfg.DebugAddr = a.XDSAddr()
	cfg.XDSAddr = "127.0.0.1:0"
	_, err = New(cfg)
	if err == nil || !strings.Contains(err.Error(), "--debug-addr") {
		t.Errorf("New on a busy port: err = %v, want one naming --debug-addr", err)
	}
}

// TestShutdownEndsEventStreams checks that an open debug UI event stream
// does not hold up shutdown.
func TestShutdownEndsEventStreams(t *testing.T) {
	cfg := DefaultConfig()
	// With a long timeout, a stream that held Shutdown would outlast
	// stop's 10s bound and fail the test.
	cfg.ShutdownTimeout = time.Hour
	r := start(t, cfg)
	resp, err := http.Get(r.base + "/debug/api/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("stream Content-Type = %q", ct)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body) // the stream ends with the server
}
