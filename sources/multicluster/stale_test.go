package multicluster

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

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
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["proxy"] = &clientcmdapi.Cluster{Server: o.srv.URL}
	cfg.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy"}
	cfg.CurrentContext = "proxy"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
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

// TestStaleRemoteFlagsItsItems stops a joined remote's API server: the
// cluster turns stale in its status and in the inputs
// (sources.StaleCluster) while its pods stay, and the flag goes once it
// answers again.
func TestStaleRemoteFlagsItsItems(t *testing.T) {
	env := west.Env(t)
	seed(t, env, "mc-stale", 2)
	api := newOutage(t, env)
	rg := newRig(t)
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
