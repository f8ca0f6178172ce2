package xds_test

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest/envoysim"
)

// TestEnvoyNack serves an Envoy-like proxy a cluster it rejects (a
// connect timeout of zero, which Envoy's validation refuses), on either
// protocol: the server records the NACK, keeps serving the proxy the
// cluster it accepted (a later change of another cluster comes with the
// old one, not the rejected one again), and the proxy recovers once a
// good version comes.
func TestEnvoyNack(t *testing.T) {
	envoyProtocols(t, func(t *testing.T, open func(grpc.ClientConnInterface, string, ...envoysim.Option) *envoysim.Envoy) {
		f := envoyFixture(t)
		e := open(dial(t, f.addr), "envoy-0", envoysim.AllowNacks())
		e.Await("the first config", func(c *envoysim.Config) bool { return c.Routes["r0"] != nil })
		e.Settle()
		nacksBefore := f.srv.Stats().Nacks["cds"]

		f.cds.Set(envoyCluster("c0", 0))
		e.Await("the bad c0 rejected", func(*envoysim.Config) bool { return e.Stats().Nacks[xds.ClusterType] == 1 })
		waitFor(t, "the NACK recorded", func() bool {
			return proxyByNode(t, f.srv, "envoy-0").Types[xds.ClusterType].Nacks == 1
		})
		ts := proxyByNode(t, f.srv, "envoy-0").Types[xds.ClusterType]
		if ts.LastNack == nil || !strings.Contains(ts.LastNack.Message, "ConnectTimeout") || len(ts.Rejected) != 1 || ts.Rejected[0] != "c0" {
			t.Errorf("the server's record of the NACK: last %+v, rejected %v", ts.LastNack, ts.Rejected)
		}
		if got := f.srv.Stats().Nacks["cds"] - nacksBefore; got != 1 {
			t.Errorf("server counted %d CDS NACKs, want 1", got)
		}
		wantConnectTimeout(t, e, "c0", time.Second)

		// Another cluster changes: the proxy takes it, and is not sent the
		// rejected c0 again.
		f.cds.Set(envoyCluster("c1", 3*time.Second))
		e.Await("c1 updated", func(c *envoysim.Config) bool {
			return c.Clusters["c1"].GetConnectTimeout().AsDuration() == 3*time.Second
		})
		e.Settle()
		wantConnectTimeout(t, e, "c0", time.Second)

		// A good version of c0: taken, warm on its load assignment, and
		// the server holds nothing back any more.
		f.cds.Set(envoyCluster("c0", 2*time.Second))
		e.Await("c0 good again", func(c *envoysim.Config) bool {
			return c.Clusters["c0"].GetConnectTimeout().AsDuration() == 2*time.Second
		})
		e.Settle()
		if n := e.Stats().Nacks[xds.ClusterType]; n != 1 {
			t.Errorf("the proxy rejected %d CDS responses, want 1", n)
		}
		waitFor(t, "the good c0 acknowledged", func() bool {
			ts := proxyByNode(t, f.srv, "envoy-0").Types[xds.ClusterType]
			return ts.AckedNonce == ts.SentNonce && len(ts.Rejected) == 0 && ts.Nacks == 1
		})
	})
}

// wantConnectTimeout checks the connect timeout of the cluster the proxy
// runs.
func wantConnectTimeout(t *testing.T, e *envoysim.Envoy, cluster string, want time.Duration) {
	t.Helper()
	if got := e.Config().Clusters[cluster].GetConnectTimeout().AsDuration(); got != want {
		t.Errorf("%s runs with connect timeout %v, want %v", cluster, got, want)
	}
}
