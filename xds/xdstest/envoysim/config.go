package envoysim

import (
	"fmt"
	"sort"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
)

// Config is the configuration the proxy runs: its active clusters and
// listeners, the load assignments and route configurations it holds, and
// the clusters and listeners still warming. A warming resource does not
// serve; the one it replaces, if any, still does. Read it only in an
// Await condition or between calls.
type Config struct {
	Clusters  map[string]*clusterv3.Cluster
	Listeners map[string]*listenerv3.Listener
	// Endpoints are the load assignments held, by name (an EDS
	// cluster's service name).
	Endpoints map[string]*endpointv3.ClusterLoadAssignment
	Routes    map[string]*routev3.RouteConfiguration
	// WarmingClusters and WarmingListeners are the updates not yet in
	// effect, with what each waits for.
	WarmingClusters  map[string]*Warming[*clusterv3.Cluster]
	WarmingListeners map[string]*Warming[*listenerv3.Listener]
}

func newConfig() *Config {
	return &Config{
		Clusters:         map[string]*clusterv3.Cluster{},
		Listeners:        map[string]*listenerv3.Listener{},
		Endpoints:        map[string]*endpointv3.ClusterLoadAssignment{},
		Routes:           map[string]*routev3.RouteConfiguration{},
		WarmingClusters:  map[string]*Warming[*clusterv3.Cluster]{},
		WarmingListeners: map[string]*Warming[*listenerv3.Listener]{},
	}
}

// Warm reports whether nothing is warming.
func (c *Config) Warm() bool { return len(c.WarmingClusters) == 0 && len(c.WarmingListeners) == 0 }

// ClusterEndpoints returns the sorted addresses ("ip:port") the active
// cluster name balances over; nil for a cluster not active or without a
// load assignment.
func (c *Config) ClusterEndpoints(name string) []string {
	cl := c.Clusters[name]
	if cl == nil {
		return nil
	}
	eds, ok := edsName(cl)
	if !ok {
		return nil
	}
	var out []string
	for _, l := range c.Endpoints[eds].GetEndpoints() {
		for _, e := range l.GetLbEndpoints() {
			sa := e.GetEndpoint().GetAddress().GetSocketAddress()
			out = append(out, fmt.Sprintf("%s:%d", sa.GetAddress(), sa.GetPortValue()))
		}
	}
	sort.Strings(out)
	return out
}

// RouteClusters returns the sorted clusters the route configuration
// name sends traffic to, each once.
func (c *Config) RouteClusters(name string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range routeClusters(c.Routes[name]) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// String summarises the configuration, for failure messages.
func (c *Config) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "clusters %v, warming %v; ", sortedKeys(c.Clusters), sortedKeys(c.WarmingClusters))
	fmt.Fprintf(&b, "listeners %v, warming %v; ", sortedKeys(c.Listeners), sortedKeys(c.WarmingListeners))
	fmt.Fprintf(&b, "endpoints %v; routes %v", sortedKeys(c.Endpoints), sortedKeys(c.Routes))
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
