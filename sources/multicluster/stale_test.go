package multicluster

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshd/meshd/sources"
	"github.com/meshd/meshd/sources/kube/kubetest"
)

// outage is a loopback proxy in front of a real API server that can stop
// answering (503 to every request, open connections cut), as an API
// server does when it goes down.
type outage struct {
	srv  *httptest.Server
	down atomic.Bool
}

func newOutage(t *testing.T, env *kubetest.Env) *outage {
	t.Helper()
	target, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	// The test API server's certificate is self-signed.
	proxy.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	o := &outage{}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o.down.Load() {
			http.Error(w, "down for the test", http.StatusServiceUnavailable)
			return
		}
		// The proxy authenticates: client-go sends no token over plain
		// HTTP.
		r.Header.Set("Authorization", "Bearer "+env.Config.BearerToken)
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(o.srv.Close)
	return o
}

// kubeconfig reaches the API server through the proxy.
func (o *outage) kubeconfig(t *testing.T) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := kubetest.WriteKubeconfig(path, o.srv.URL); err != nil {
		t.Fatal(err)
	}
	return kubeconfigOf(t, path)
}

// stop makes the proxy refuse every request and cuts the open watches.
func (o *outage) stop() {
	o.down.Store(true)
	o.srv.CloseClientConnections()
}

func (o *outage) resume() { o.down.Store(false) }

// TestStaleRemoteFlagsItsItems stops a joined remote's API server: once
// the grace has passed, the cluster turns stale in its status and in the
// inputs (sources.StaleCluster) while its pods stay, and the flag goes
// once it answers again.
func TestStaleRemoteFlagsItsItems(t *testing.T) {
	env := west.Env(t)
	seed(t, env, "mc-stale", 2)
	api := newOutage(t, env)
	rg := newRig(t, WithStaleGrace(time.Second))
	rg.r.Apply("secret meshd/west", []Cluster{{Name: "west", Kubeconfig: api.kubeconfig(t)}}, nil)
	waitFor(t, "the remote's pods", func() bool { return countNS(rg.in.Pods.List(), "mc-stale") == 2 })
	if n := rg.in.StaleClusters.Len(); n != 0 {
		t.Fatalf("%d stale clusters while the remote answers, want 0", n)
	}

	api.stop()
	waitFor(t, "the cluster flagged stale", func() bool {
		s, ok := rg.in.StaleClusters.Get("west")
		return ok && !s.Since.IsZero() && rg.state("west").State == StateStale
	})
	if n := countNS(rg.in.Pods.List(), "mc-stale"); n != 2 {
		t.Errorf("%d pods of the stale cluster, want its last 2", n)
	}

	api.resume()
	waitFor(t, "the flag to clear once it answers", func() bool {
		return rg.in.StaleClusters.Len() == 0 && rg.state("west").State == StateSynced
	})
	if n := countNS(rg.in.Pods.List(), "mc-stale"); n != 2 {
		t.Errorf("%d pods once the cluster answers again, want 2", n)
	}
}

// TestBriefBlipIsNotStale stops a joined remote's API server briefly,
// then for good: the blip fails more requests than the threshold but
// for less than the grace, and flags nothing; the sustained outage flags
// the cluster stale, and the first answer clears it. The clock Remotes
// judge by runs an hour ahead once the blip is over, so that the outage
// outlasts the grace without the test waiting an hour, and the blip
// stays within it however slow the machine.
func TestBriefBlipIsNotStale(t *testing.T) {
	env := west.Env(t)
	seed(t, env, "mc-blip", 2)
	api := newOutage(t, env)
	clock := &aheadClock{}
	rg := newRig(t, withClock(clock.now), WithStaleFailures(3), WithStaleGrace(time.Hour), WithStaleTimeout(24*time.Hour))
	flags := &eventLog[sources.StaleCluster]{}
	rg.in.StaleClusters.Register(flags.record)
	rg.r.Apply("secret meshd/west", []Cluster{{Name: "west", Kubeconfig: api.kubeconfig(t)}}, nil)
	waitFor(t, "the remote's pods", func() bool { return countNS(rg.in.Pods.List(), "mc-blip") == 2 })

	api.stop()
	rg.waitFailingAndJudged(t, 3)
	if st := rg.state("west"); st.State != StateSynced || rg.in.StaleClusters.Len() != 0 {
		t.Fatalf("after a blip of %d failed requests: state %s, %d stale clusters; want synced, none",
			st.ConsecutiveErrors, st.State, rg.in.StaleClusters.Len())
	}
	api.resume()
	waitFor(t, "the remote to answer again", func() bool { return rg.state("west").FailingSince.IsZero() })

	api.stop()
	rg.waitFailingAndJudged(t, 3)
	clock.advance(time.Hour)
	waitFor(t, "the cluster flagged stale after the grace", func() bool {
		_, ok := rg.in.StaleClusters.Get("west")
		return ok && rg.state("west").State == StateStale
	})
	if n := countNS(rg.in.Pods.List(), "mc-blip"); n != 2 {
		t.Errorf("%d pods of the stale cluster, want its last 2", n)
	}
	api.resume()
	waitFor(t, "the flag to clear on the first answer", func() bool {
		return rg.in.StaleClusters.Len() == 0 && rg.state("west").State == StateSynced
	})
	// The handler runs on its own queue, in order: had the blip flagged
	// the cluster, it would have seen two flags.
	waitFor(t, "the handler to see the flag come and go", func() bool { a, d := flags.counts(); return a >= 1 && d >= 1 })
	if a, d := flags.counts(); a != 1 || d != 1 {
		t.Errorf("the stale flag was set %d times and cleared %d times, want once each (the outage, not the blip)", a, d)
	}
}

// waitFailingAndJudged waits until cluster west has failed at least n
// requests in a row and Remotes have judged its health since.
func (rg *rig) waitFailingAndJudged(t *testing.T, n uint64) {
	t.Helper()
	waitFor(t, "the remote to fail requests", func() bool { return rg.state("west").ConsecutiveErrors >= n })
	since := rg.r.opts.now()
	waitFor(t, "Remotes to judge the failing remote", func() bool {
		rg.r.mu.Lock()
		defer rg.r.mu.Unlock()
		st := rg.r.clusters["west"]
		return st != nil && st.checked.After(since)
	})
}

// withClock sets the clock Remotes and their clusters' health read.
func withClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// aheadClock is the wall clock, ahead by what advance added.
type aheadClock struct {
	mu    sync.Mutex
	ahead time.Duration
}

func (c *aheadClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.ahead)
}

func (c *aheadClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ahead += d
}
