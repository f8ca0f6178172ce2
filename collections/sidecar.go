package collections

import (
	"slices"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"

	"github.com/meshd/meshd/krt"
)

// portSet is the set of port numbers served by HTTP services.
type portSet struct{ Ports []int32 }

// sidecarPort is one port number with a sidecar listener.
type sidecarPort struct{ Port int32 }

func (p sidecarPort) ResourceName() string { return itoa(p.Port) }

// newSidecar derives the sidecar route configurations and listeners: one
// of each per port number that some HTTP service listens on, and with
// views one more per namespace that sees a different set of the port's
// services (WithNamespaceViews).
func newSidecar(g *krt.Graph, services krt.Collection[ServiceInfo], portRoutes krt.Collection[PortRoutes], views bool) (
	krt.Collection[Resource[*routev3.RouteConfiguration]], krt.Collection[Resource[*listenerv3.Listener]]) {
	ports := sidecarPorts(g, services)
	byPort := krt.NewIndex(portRoutes, "http-by-port", func(p PortRoutes) []string {
		if !p.Protocol.IsHTTP() {
			return nil
		}
		return []string{itoa(p.Port)}
	})
	viewsOf := func(ctx krt.HandlerContext, p sidecarPort) []sidecarView {
		entries := krt.Fetch(ctx, portRoutes, krt.FilterIndex(byPort, itoa(p.Port)))
		if !views {
			return []sidecarView{{entries: entries}}
		}
		return sidecarViews(entries)
	}
	rcs := krt.NewManyCollection(g, ports, func(ctx krt.HandlerContext, p sidecarPort) []Resource[*routev3.RouteConfiguration] {
		var out []Resource[*routev3.RouteConfiguration]
		for _, v := range viewsOf(ctx, p) {
			name := itoa(p.Port) + v.suffix
			out = append(out, inView(v, newResource(name, buildSidecarRouteConfig(name, v.entries))))
		}
		return out
	}, krt.WithName("SidecarRouteConfigurations"))
	httpLis := krt.NewManyCollection(g, ports, func(ctx krt.HandlerContext, p sidecarPort) []Resource[*listenerv3.Listener] {
		vs := []sidecarView{{}}
		if views {
			// Only views make a listener depend on the port's services.
			vs = viewsOf(ctx, p)
		}
		var out []Resource[*listenerv3.Listener]
		for _, v := range vs {
			name := SidecarListenerName(p.Port) + v.suffix
			out = append(out, inView(v, newResource(name, buildSidecarListener(name, p.Port, itoa(p.Port)+v.suffix))))
		}
		return out
	}, krt.WithName("SidecarHTTPListeners"))
	tcpLis := sidecarTCPListeners(g, services)
	wildcardLis := sidecarWildcardTCPListeners(g, services)
	return rcs, krt.Join(g, []krt.Collection[Resource[*listenerv3.Listener]]{httpLis, tcpLis, wildcardLis}, krt.WithName("SidecarListeners"))
}

// sidecarPorts derives the port numbers that get a sidecar listener. The
// set of ports changes only when services do, never with endpoints, so the
// per-port outputs are recomputed only when a service on their port changes.
func sidecarPorts(g *krt.Graph, services krt.Collection[ServiceInfo]) krt.Collection[sidecarPort] {
	set := krt.NewSingleton(g, func(ctx krt.HandlerContext) *portSet {
		var ports []int32
		for _, s := range krt.Fetch(ctx, services) {
			for _, p := range s.Ports {
				if p.Protocol.IsHTTP() {
					ports = append(ports, p.Port)
				}
			}
		}
		slices.Sort(ports)
		return &portSet{Ports: slices.Compact(ports)}
	}, krt.WithName("SidecarPortSet"))
	return krt.NewManyCollection(g, set, func(_ krt.HandlerContext, s portSet) []sidecarPort {
		out := make([]sidecarPort, len(s.Ports))
		for i, p := range s.Ports {
			out[i] = sidecarPort{Port: p}
		}
		return out
	}, krt.WithName("SidecarPorts"))
}

// sidecarTCPListeners derives one listener per ClusterIP and TCP port.
// Services with no cluster IP get theirs from sidecarWildcardTCPListeners.
func sidecarTCPListeners(g *krt.Graph, services krt.Collection[ServiceInfo]) krt.Collection[Resource[*listenerv3.Listener]] {
	return krt.NewManyCollection(g, services, func(_ krt.HandlerContext, s ServiceInfo) []Resource[*listenerv3.Listener] {
		if s.ClusterIP == "" {
			return nil
		}
		var out []Resource[*listenerv3.Listener]
		for _, p := range s.Ports {
			if p.Protocol.IsHTTP() {
				continue
			}
			name := s.ClusterIP + "_" + itoa(p.Port)
			out = append(out, newResource(name, buildSidecarTCPListener(name, s.ClusterIP, p.Port, ClusterName(p.Port, s.Hostname))).exported(s.ExportTo))
		}
		return out
	}, krt.WithName("SidecarTCPListeners"))
}

// sidecarView is one variant of a port's sidecar resources: the services
// a namespace may see (suffix "~<ns>", visible to it alone), or those
// every namespace may see (no suffix, hidden from the namespaces with a
// variant of their own).
type sidecarView struct {
	suffix     string
	namespace  string
	hiddenFrom []string
	entries    []PortRoutes
}

// sidecarViews splits a port's services into views: one for the services
// exported to all, and one per namespace that some service with a narrower
// exportTo is exported to, holding those too.
func sidecarViews(entries []PortRoutes) []sidecarView {
	var public []PortRoutes
	var namespaces []string
	for _, e := range entries {
		if e.ExportTo == nil {
			public = append(public, e)
		}
		namespaces = append(namespaces, e.ExportTo...)
	}
	slices.Sort(namespaces)
	namespaces = slices.Compact(namespaces)
	views := []sidecarView{{entries: public, hiddenFrom: namespaces}}
	for _, ns := range namespaces {
		v := sidecarView{suffix: "~" + ns, namespace: ns}
		for _, e := range entries {
			if e.ExportTo == nil || slices.Contains(e.ExportTo, ns) {
				v.entries = append(v.entries, e)
			}
		}
		views = append(views, v)
	}
	return views
}

// inView gives r the view's visibility.
func inView[M proto.Message](v sidecarView, r Resource[M]) Resource[M] {
	if v.namespace != "" {
		r.VisibleTo = []string{v.namespace}
	}
	r.HiddenFrom = v.hiddenFrom
	return r
}
