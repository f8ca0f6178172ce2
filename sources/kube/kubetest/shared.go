package kubetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// IgnoredGoroutines are goroutines a leak check must not count against a
// test that used the API server: the idle keep-alive connections of
// client-go's process-wide transport cache, which outlive any one client
// by design.
var IgnoredGoroutines = []goleak.Option{
	goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
	goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
	goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
	goleak.IgnoreAnyFunction("net/http.(*http2ClientConn).readLoop"),
}

// Shared is one API server for a test package's tests, started when a
// test first asks for it, so a run of the package's other tests does not
// pay for it. Wrap the package's tests with Around to stop it at the end
// and report skipped tests:
//
//	var apiServer = kubetest.NewShared(nil)
//
//	func TestMain(m *testing.M) {
//		leakcheck.VerifyTestMain(apiServer.Around(m), kubetest.IgnoredGoroutines...)
//	}
//
//	func TestX(t *testing.T) { env := apiServer.Env(t); ... }
type Shared struct {
	setup func(ctx context.Context, e *Env) error
	opts  []Option

	once sync.Once
	env  *Env
	err  error
}

// NewShared returns a Shared server started with opts; setup, if not nil,
// runs once after the start (installing CRDs, applying manifests) and a
// failure of it fails every test that asks for the server.
func NewShared(setup func(ctx context.Context, e *Env) error, opts ...Option) *Shared {
	return &Shared{setup: setup, opts: opts}
}

// Env returns the server, starting it on first use, after Need: it skips
// t with -short, builds the binaries if they are missing, and fails t
// when they cannot be built or the server does not start.
func (s *Shared) Env(t testing.TB) *Env {
	t.Helper()
	Need(t)
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if s.env, s.err = Start(ctx, s.opts...); s.err == nil && s.setup != nil {
			s.err = s.setup(ctx, s.env)
		}
	})
	if s.err != nil {
		t.Fatalf("kube-apiserver: %v", s.err)
	}
	return s.env
}

// Around returns m with the server stopped after its tests and the
// tests kubetest skipped reported (ReportSkips), for TestMain.
func (s *Shared) Around(m *testing.M) interface{ Run() int } { return ReportSkips(around{m, s}) }

// Stop stops the server if it was started.
func (s *Shared) Stop() {
	if s.env != nil {
		s.env.Stop()
	}
}

type around struct {
	m *testing.M
	s *Shared
}

func (a around) Run() int {
	code := a.m.Run()
	a.s.Stop()
	return code
}
