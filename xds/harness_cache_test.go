package xds

import (
	"fmt"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/meshd/meshd/krt"
)

// change applies the set and delete lines of a cache command as one batch,
// as the join handler would, tells every stream of the changed names, and
// flushes each, as the server does in a round.
func (h *harness) change(c command) (string, error) {
	b := krt.Batch[entry]{}
	h.cache.read(func(v view) { b.Version = v.version + 1 })
	for _, line := range c.input {
		ev, err := h.cacheEvent(strings.Fields(line))
		if err != nil {
			return "", fmt.Errorf("%q: %w", line, err)
		}
		b.Events = append(b.Events, ev)
	}
	h.cache.apply(b)
	changed := h.cache.takeRound()
	defer h.cache.endRound()
	var out strings.Builder
	routes := h.subs.route(changed)
	for _, name := range h.order {
		st := h.streams[name]
		var woken bool
		h.cache.read(func(v view) {
			if routed := routes[st]; routed != nil {
				woken = st.s.changed(routed, v)
				st.s.round = v.round
			} else if !st.ended && concerns(st.s, changed, v) {
				h.t.Errorf("%s: the index does not route the change to %s, which it concerns", c.pos, name)
			}
		})
		if woken {
			h.flush(st, nil, &out)
		}
	}
	return out.String(), nil
}

// concerns reports whether changed holds a name that s subscribes to or
// holds, by session.changed's rule, without changing s: what the index
// must route to s.
func concerns(s *session, changed map[string]map[string]struct{}, v view) bool {
	for t, names := range changed {
		ts := s.types[t]
		if ts == nil {
			continue
		}
		cur := s.resources(v, t)
		for n := range names {
			if ts.sent.has(n) || ts.wants(n, cur[n]) {
				return true
			}
		}
	}
	return false
}

// cacheEvent reads "set TYPE NAME [rev=R] [vis=...] [variant=V[+V...]]
// [named=1]" (named=1: served by name only) or "delete TYPE NAME
// [variant=V]".
func (h *harness) cacheEvent(f []string) (krt.Event[entry], error) {
	if len(f) < 3 {
		return krt.Event[entry]{}, fmt.Errorf("want set|delete TYPE NAME")
	}
	t, name := typeURL(f[1]), f[2]
	c := parseCommand("", []string{strings.Join(f, " ")})
	variant := c.kv["variant"]
	var old *entry
	h.cache.read(func(v view) {
		if r := v.resources(t)[name]; r != nil && variant == "" {
			old = &entry{res: r}
		}
	})
	first, _, _ := strings.Cut(variant, "+")
	if r := h.cache.own[variantKey(t, first)][name]; r != nil {
		old = &entry{res: r}
	}
	switch f[0] {
	case "delete":
		if old == nil {
			return krt.Event[entry]{}, fmt.Errorf("no %s %s to delete", f[1], name)
		}
		return krt.Event[entry]{Type: krt.EventDelete, Key: entryKey(t, name), Old: old}, nil
	case "set":
		r, err := newResource(t, name, warmingMessage(scriptMessage(t, name, c.kv["rev"]), c.kv))
		if err != nil {
			return krt.Event[entry]{}, err
		}
		if variant != "" {
			r.variants = strings.Split(variant, "+")
		}
		r.namedOnly = c.kv["named"] == "1"
		if vis, ok := c.kv["vis"]; ok {
			v := parseVisibility(vis)
			r.vis = &v
		}
		ev := krt.Event[entry]{Type: krt.EventAdd, Key: entryKey(t, name), New: &entry{res: r}, Old: old}
		if old != nil {
			ev.Type = krt.EventUpdate
		}
		return ev, nil
	}
	return krt.Event[entry]{}, fmt.Errorf("unknown cache change %q", f[0])
}

// parseVisibility reads Visibility.String's form: "*", "a,b" or "*,-a,-b";
// "" is visible to none.
func parseVisibility(s string) Visibility {
	if s == "*" {
		return VisibleToAll()
	}
	if rest, ok := strings.CutPrefix(s, "*,"); ok {
		var except []string
		for _, n := range strings.Split(rest, ",") {
			except = append(except, strings.TrimPrefix(n, "-"))
		}
		return VisibleToAllExcept(except...)
	}
	if s == "" {
		return VisibleTo()
	}
	return VisibleTo(strings.Split(s, ",")...)
}

// scriptMessage returns a resource of type t named name whose content is
// rev: a new rev is a new version.
func scriptMessage(t, name, rev string) proto.Message {
	switch t {
	case ListenerType:
		return &listenerv3.Listener{Name: name, StatPrefix: rev}
	case RouteType:
		return &routev3.RouteConfiguration{Name: name, VirtualHosts: []*routev3.VirtualHost{{Name: rev}}}
	case ClusterType:
		return &clusterv3.Cluster{Name: name, AltStatName: rev}
	default:
		return &endpointv3.ClusterLoadAssignment{ClusterName: name,
			Endpoints: []*endpointv3.LocalityLbEndpoints{{Locality: &corev3.Locality{Zone: rev}}}}
	}
}

// revOf returns the rev of a message scriptMessage made.
func revOf(m proto.Message) string {
	switch m := m.(type) {
	case *listenerv3.Listener:
		return m.GetStatPrefix()
	case *routev3.RouteConfiguration:
		return m.GetVirtualHosts()[0].GetName()
	case *clusterv3.Cluster:
		return m.GetAltStatName()
	case *endpointv3.ClusterLoadAssignment:
		return m.GetEndpoints()[0].GetLocality().GetZone()
	}
	return "?"
}

// warmingMessage makes msg wait for a dependent resource (warmsOn), as
// "set cds NAME eds=CLA" (an EDS cluster) or "set lds NAME rds=ROUTE" (an
// API listener using RDS) says.
func warmingMessage(msg proto.Message, kv map[string]string) proto.Message {
	switch m := msg.(type) {
	case *clusterv3.Cluster:
		if n, ok := kv["eds"]; ok {
			m.ClusterDiscoveryType = &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS}
			m.EdsClusterConfig = &clusterv3.Cluster_EdsClusterConfig{ServiceName: n}
		}
	case *listenerv3.Listener:
		if n, ok := kv["rds"]; ok {
			hcm, _ := anypb.New(&hcmv3.HttpConnectionManager{RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{
				Rds: &hcmv3.Rds{RouteConfigName: n}}})
			m.ApiListener = &listenerv3.ApiListener{ApiListener: hcm}
		}
	}
	return msg
}
