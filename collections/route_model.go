package collections

import (
	"cmp"
	"slices"
	"time"

	"github.com/meshd/meshd/krt"
)

// PathKind says how a RouteMatch compares the request path.
type PathKind int

// Path match kinds.
const (
	// PathPrefix matches Path and every path below it by whole segments:
	// "/foo" matches "/foo" and "/foo/bar", not "/foobar" (Gateway API
	// PathPrefix). "/" matches everything.
	PathPrefix PathKind = iota
	// PathExact matches Path only.
	PathExact
	// PathRegex matches paths fully matched by the RE2 expression Path.
	PathRegex
	// PathStringPrefix matches paths that start with Path, character by
	// character (used for gRPC service matches, "/pkg.Service/").
	PathStringPrefix
)

// HeaderMatch matches a request header (or, in RouteMatch.QueryParams, a
// query parameter) by exact value or RE2 expression.
type HeaderMatch struct {
	Name  string
	Value string
	Regex bool
}

// RouteMatch is one way a request can match a rule; all its conditions
// must hold.
type RouteMatch struct {
	PathKind    PathKind
	Path        string
	Headers     []HeaderMatch
	QueryParams []HeaderMatch
	// Method is the HTTP method to match, "" for any.
	Method string
}

// Header is a header name and value.
type Header struct{ Name, Value string }

// HeaderModifier changes headers of a request or response.
type HeaderModifier struct {
	Set    []Header // replace or add
	Add    []Header // append
	Remove []string
}

// Retry is a rule's retry policy.
type Retry struct {
	// Attempts is the number of retries; 0 means the default, 1.
	Attempts int32
	// Codes are HTTP status codes that trigger a retry, in addition to
	// connection failures.
	Codes []int32
	// Backoff is the base interval between retries, 0 for the default.
	Backoff time.Duration
}

// WeightedBackend is a rule's destination: a service port's cluster, or
// a reference that resolves to none.
type WeightedBackend struct {
	// Cluster is the service port's cluster, "" when Unresolved is set.
	Cluster string
	Weight  uint32
	// Unresolved says why the reference names no cluster (its
	// ResolvedRefs message). Its share of the traffic fails, as the
	// Gateway API asks: 500 in Envoy, UNAVAILABLE in gRPC.
	Unresolved string
}

// RouteRule is where matching requests go and how they are handled.
type RouteRule struct {
	// Matches are alternatives; a rule without matches matches every
	// request.
	Matches []RouteMatch
	// Backends share the traffic by weight; a rule without a resolved
	// backend of positive weight fails its requests (500 in Envoy,
	// UNAVAILABLE in gRPC), and so does the share of an unresolved one.
	Backends []WeightedBackend
	// Timeout bounds the whole request, nil for none given; zero disables
	// the proxy's default timeout.
	Timeout *time.Duration
	// BackendTimeout bounds each attempt, nil for none given.
	BackendTimeout  *time.Duration
	Retry           *Retry
	RequestHeaders  *HeaderModifier
	ResponseHeaders *HeaderModifier
}

// RouteBinding is an accepted route attached to one service: the rules a
// Gateway API route contributes to the traffic sent to that service.
type RouteBinding struct {
	// Kind is "HTTPRoute" or "GRPCRoute".
	Kind      string
	Namespace string
	Name      string
	// Created orders routes of equal precedence, older first.
	Created time.Time
	// Service is the parent service, "namespace/name".
	Service string
	// Port is the parent port the route is restricted to, 0 for all.
	Port  int32
	Rules []RouteRule
}

// RouteKey returns "Kind/namespace/name", the key of a route object.
func RouteKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// ResourceName returns "Kind/namespace/name/serviceNamespace/serviceName/port".
func (b RouteBinding) ResourceName() string {
	return RouteKey(b.Kind, b.Namespace, b.Name) + "/" + b.Service + "/" + itoa(b.Port)
}

// RouteEntry is one match of one rule, placed in the order a proxy
// evaluates them.
type RouteEntry struct {
	// Name identifies the origin: "Kind/namespace/name/rule/match".
	Name  string
	Match RouteMatch
	Rule  RouteRule
}

// PortRoutes is everything a proxy needs to route traffic to one service
// port: the entries of every route attached to it, in precedence order,
// before the default route to the port's own cluster.
type PortRoutes struct {
	// Cluster is the port's own cluster, the default destination and the
	// item's key.
	Cluster   string
	Service   string // "namespace/name"
	Name      string
	Namespace string
	Hostname  string
	ClusterIP string
	Port      int32
	Protocol  Protocol
	Entries   []RouteEntry
	// ExportTo is the service's (ServiceInfo.ExportTo).
	ExportTo []string
}

// ResourceName returns the port's cluster name.
func (p PortRoutes) ResourceName() string { return p.Cluster }

// ListenerName returns "<hostname>:<port>", the name of the gRPC
// listener and route configuration of the port.
func (p PortRoutes) ListenerName() string { return p.Hostname + ":" + itoa(p.Port) }

// precedence orders route entries by the Gateway API rules: exact paths,
// then regular expressions, then longer prefixes; then a method match;
// then more header matches; then more query matches. Ties go to the older
// route, then the route key, then rule and match order.
type rankedEntry struct {
	entry   RouteEntry
	created time.Time
	route   string
	rule    int
	match   int
}

func comparePrecedence(a, b rankedEntry) int {
	kindRank := func(k PathKind) int {
		switch k {
		case PathExact:
			return 0
		case PathRegex:
			return 1
		}
		return 2
	}
	am, bm := a.entry.Match, b.entry.Match
	if c := cmp.Compare(kindRank(am.PathKind), kindRank(bm.PathKind)); c != 0 {
		return c
	}
	if c := cmp.Compare(len(bm.Path), len(am.Path)); c != 0 {
		return c
	}
	if c := boolOrder(bm.Method != "", am.Method != ""); c != 0 {
		return c
	}
	if c := cmp.Compare(len(bm.Headers), len(am.Headers)); c != 0 {
		return c
	}
	if c := cmp.Compare(len(bm.QueryParams), len(am.QueryParams)); c != 0 {
		return c
	}
	return cmp.Or(a.created.Compare(b.created), cmp.Compare(a.route, b.route),
		cmp.Compare(a.rule, b.rule), cmp.Compare(a.match, b.match))
}

// orderEntries flattens the bindings of one port into entries in
// precedence order.
func orderEntries(bindings []RouteBinding) []RouteEntry {
	var ranked []rankedEntry
	for _, b := range bindings {
		route := RouteKey(b.Kind, b.Namespace, b.Name)
		for ri, r := range b.Rules {
			matches := r.Matches
			if len(matches) == 0 {
				matches = []RouteMatch{{PathKind: PathPrefix, Path: "/"}}
			}
			for mi, m := range matches {
				ranked = append(ranked, rankedEntry{
					entry:   RouteEntry{Name: route + "/" + itoa(int32(ri)) + "/" + itoa(int32(mi)), Match: m, Rule: r},
					created: b.Created, route: route, rule: ri, match: mi,
				})
			}
		}
	}
	slices.SortStableFunc(ranked, comparePrecedence)
	out := make([]RouteEntry, len(ranked))
	for i, r := range ranked {
		out[i] = r.entry
	}
	return out
}

func newPortRoutes(g *krt.Graph, services krt.Collection[ServiceInfo], bindings krt.Collection[RouteBinding], byService krt.Index[RouteBinding]) krt.Collection[PortRoutes] {
	return krt.NewManyCollection(g, services, func(ctx krt.HandlerContext, svc ServiceInfo) []PortRoutes {
		attached := krt.Fetch(ctx, bindings, krt.FilterIndex(byService, svc.ResourceName()))
		out := make([]PortRoutes, 0, len(svc.Ports))
		for _, p := range svc.Ports {
			var mine []RouteBinding
			for _, b := range attached {
				if b.Port == 0 || b.Port == p.Port {
					mine = append(mine, b)
				}
			}
			out = append(out, PortRoutes{
				Cluster:   ClusterName(p.Port, svc.Hostname),
				Service:   svc.ResourceName(),
				Name:      svc.Name,
				Namespace: svc.Namespace,
				Hostname:  svc.Hostname,
				ClusterIP: svc.ClusterIP,
				Port:      p.Port,
				Protocol:  p.Protocol,
				Entries:   orderEntries(mine),
				ExportTo:  svc.ExportTo,
			})
		}
		return out
	}, krt.WithName("PortRoutes"))
}
