package xds_test

import (
	"slices"
	"testing"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/internal/meshmodel"
	"github.com/meshd/meshd/xds/xdstest/envoysim"
)

// TestEnvoyMesh drives Kubernetes objects through the mesh model and the
// server to two Envoy-like proxies at once, one on SotW and one on Delta,
// which fail the test on any Envoy rule the server breaks: start, a
// cluster update, endpoint changes, a new listener and route changes, a
// service removed, and the Delta proxy reconnecting with the versions it
// holds.
func TestEnvoyMesh(t *testing.T) {
	m := newEnvoyMesh(t)
	echo, canary := clusterOf("echo"), clusterOf("canary")
	m.await("the mesh", func(c *envoysim.Config) bool {
		return len(c.ClusterEndpoints(echo)) == 2 && c.Listeners["0.0.0.0_7000"] != nil &&
			slices.Equal(hostClusters(c.Routes["7000"], "front.ns.svc.cluster.local"), []string{canary, echo})
	})

	// A cluster update: echo's port becomes plain HTTP, so its cluster
	// loses its HTTP/2 options and warms until its endpoints come again.
	svc := k8sService("echo", 9000)
	svc.Spec.Ports[0].Name = "http"
	m.in.Set(svc)
	m.await("echo over HTTP/1", func(c *envoysim.Config) bool {
		return c.Clusters[echo] != nil && len(c.Clusters[echo].GetTypedExtensionProtocolOptions()) == 0
	})
	for _, e := range m.proxies {
		if n := e.Stats().Unchanged[xds.EndpointType]; n != 1 {
			t.Errorf("unchanged load assignments sent: %d, want 1 (echo's, warming its cluster)", n)
		}
	}

	// Endpoint changes.
	m.in.Delete(k8sPod("echo-1", "echo", "10.0.0.2"))
	m.in.Set(k8sPod("echo-2", "echo", "10.0.0.4"))
	m.await("echo on 10.0.0.1 and 10.0.0.4", func(c *envoysim.Config) bool {
		return slices.Equal(c.ClusterEndpoints(echo), []string{"10.0.0.1:9000", "10.0.0.4:9000"})
	})

	// A new port: a new listener, warm once its route comes; a route
	// change, applied as it comes.
	web := k8sService("web", 9000)
	web.Spec.Ports[0].Port = 8080
	m.in.Set(web, k8sPod("web-0", "web", "10.0.0.5"))
	m.in.Set(split("front", "echo", "canary", 0, 100))
	m.await("the web listener, and front all to canary", func(c *envoysim.Config) bool {
		return c.Listeners["0.0.0.0_8080"] != nil && c.Routes["8080"] != nil &&
			slices.Equal(hostClusters(c.Routes["7000"], "front.ns.svc.cluster.local"), []string{canary})
	})

	m.reconnectAndRemove(canary)
	m.noNacks()
}

// envoyMesh is the mesh model served to an Envoy-like proxy per protocol.
type envoyMesh struct {
	t       *testing.T
	in      sources.StaticInputs
	srv     *xds.Server
	addr    string
	proxies []*envoysim.Envoy // SotW, Delta
}

func newEnvoyMesh(t *testing.T) *envoyMesh {
	g := krt.NewGraph()
	mesh := meshmodel.New(g, "test")
	m := &envoyMesh{t: t, in: mesh.Inputs, srv: xds.New(g, mesh.Sources)}
	m.in.Set(k8sService("front", 9000), k8sService("echo", 9000), k8sService("canary", 9000),
		k8sPod("echo-0", "echo", "10.0.0.1"), k8sPod("echo-1", "echo", "10.0.0.2"), k8sPod("canary-0", "canary", "10.0.0.3"))
	m.in.Set(split("front", "echo", "canary", 90, 10))
	m.addr = serve(t, g, m.srv)
	m.proxies = []*envoysim.Envoy{
		envoysim.New(t, envoysim.SotW, dial(t, m.addr), envoysim.Node("sidecar-sotw")),
		envoysim.New(t, envoysim.Delta, dial(t, m.addr), envoysim.Node("sidecar-delta")),
	}
	return m
}

// await waits for cond, and then for nothing warming, on every proxy.
func (m *envoyMesh) await(what string, cond func(*envoysim.Config) bool) {
	m.t.Helper()
	for _, e := range m.proxies {
		e.Await(what, cond)
		e.Settle()
	}
}

// reconnectAndRemove moves the Delta proxy to a new stream, naming what
// it holds, and then removes the canary service: the proxy is sent
// nothing again, and the removal as before.
func (m *envoyMesh) reconnectAndRemove(canary string) {
	m.t.Helper()
	delta := m.proxies[1]
	before := delta.Stats()
	delta.Reconnect(dial(m.t, m.addr))
	awaitResumed(m.t, m.srv, 4)
	m.in.Delete(k8sService("canary", 9000), k8sPod("canary-0", "canary", "10.0.0.3"))
	m.await("canary gone", func(c *envoysim.Config) bool { return c.Clusters[canary] == nil && c.Endpoints[canary] == nil })
	after := delta.Stats()
	for _, typ := range []string{xds.ClusterType, xds.EndpointType, xds.ListenerType} {
		if n := after.Resources[typ] - before.Resources[typ]; n != 0 {
			m.t.Errorf("Delta %s resources after the reconnect: %d, want 0", typ, n)
		}
	}
}

// noNacks checks that the server recorded no NACK of either proxy.
func (m *envoyMesh) noNacks() {
	m.t.Helper()
	for _, id := range []string{"sidecar-sotw", "sidecar-delta"} {
		for typ, ts := range proxyByNode(m.t, m.srv, id).Types {
			if ts.Nacks != 0 {
				m.t.Errorf("%s rejected %s: %+v", id, typ, ts.LastNack)
			}
		}
	}
}

// clusterOf is the cluster of a test service's port.
func clusterOf(service string) string { return "outbound|7000||" + service + ".ns.svc.cluster.local" }

// hostClusters returns the sorted clusters, with a weight above 0, of
// the first route of the virtual host of rc serving host: where a
// request to "/" goes.
func hostClusters(rc *routev3.RouteConfiguration, host string) []string {
	var out []string
	for _, vh := range rc.GetVirtualHosts() {
		if !slices.Contains(vh.GetDomains(), host) || len(vh.GetRoutes()) == 0 {
			continue
		}
		a := vh.GetRoutes()[0].GetRoute()
		if c := a.GetCluster(); c != "" {
			out = append(out, c)
		}
		for _, wc := range a.GetWeightedClusters().GetClusters() {
			if wc.GetWeight().GetValue() > 0 {
				out = append(out, wc.GetName())
			}
		}
	}
	slices.Sort(out)
	return out
}
