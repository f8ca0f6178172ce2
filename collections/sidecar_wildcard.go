package collections

import (
	"slices"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"

	"github.com/meshd/meshd/krt"
)

// wildcardTCPPort is a non-HTTP port that exactly one service with no
// cluster IP listens on and no HTTP service shares.
type wildcardTCPPort struct {
	Port     int32
	Cluster  string
	ExportTo []string
}

// wildcardTCPPorts lists the ports of wildcardTCPPortsOf, sorted by port.
type wildcardTCPPorts struct{ Ports []wildcardTCPPort }

// sidecarWildcardTCPListeners derives the sidecar listeners of non-HTTP
// ports of services that are not headless but have no cluster IP, as
// services from a folder seldom set one. With no virtual IP to bind,
// such a listener binds 0.0.0.0:<port> and is named like the HTTP ones,
// "0.0.0.0_<port>"; that is unambiguous only while one service alone
// claims the port, so a port shared with another such service or with
// any HTTP service (whose listener already owns 0.0.0.0:<port>) gets
// none. Services with a cluster IP keep their "<clusterIP>_<port>"
// listeners, which Envoy prefers over the wildcard as the closer match.
func sidecarWildcardTCPListeners(g *krt.Graph, services krt.Collection[ServiceInfo]) krt.Collection[Resource[*listenerv3.Listener]] {
	ports := krt.NewSingleton(g, func(ctx krt.HandlerContext) *wildcardTCPPorts {
		return &wildcardTCPPorts{Ports: wildcardTCPPortsOf(krt.Fetch(ctx, services))}
	}, krt.WithName("SidecarWildcardTCPPorts"))
	return krt.NewManyCollection(g, ports, func(_ krt.HandlerContext, ps wildcardTCPPorts) []Resource[*listenerv3.Listener] {
		out := make([]Resource[*listenerv3.Listener], len(ps.Ports))
		for i, p := range ps.Ports {
			name := SidecarListenerName(p.Port)
			out[i] = newResource(name, buildSidecarTCPListener(name, "0.0.0.0", p.Port, p.Cluster)).exported(p.ExportTo)
		}
		return out
	}, krt.WithName("SidecarWildcardTCPListeners"))
}

// wildcardTCPPortsOf returns the non-HTTP ports of services with no
// cluster IP that are not headless, leaving out every port number that
// another service port claims too: a second such service, or an HTTP
// port of any service.
func wildcardTCPPortsOf(services []ServiceInfo) []wildcardTCPPort {
	claims := map[int32]int{}
	var candidates []wildcardTCPPort
	for _, s := range services {
		for _, p := range s.Ports {
			if p.Protocol.IsHTTP() {
				claims[p.Port]++
				continue
			}
			if s.ClusterIP != "" || s.Headless {
				continue
			}
			claims[p.Port]++
			candidates = append(candidates, wildcardTCPPort{Port: p.Port, Cluster: ClusterName(p.Port, s.Hostname), ExportTo: s.ExportTo})
		}
	}
	candidates = slices.DeleteFunc(candidates, func(c wildcardTCPPort) bool { return claims[c.Port] > 1 })
	slices.SortFunc(candidates, func(a, b wildcardTCPPort) int { return int(a.Port) - int(b.Port) })
	return candidates
}
