package debugui

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/meshd/meshd/krt"
)

// The fixture is a mesh-shaped graph of about thirty collections: sources,
// derived collections, joins, indexes and singletons, one collection that
// fails for one input and one that panics for another.

type fxNamespace struct {
	Name   string
	Labels map[string]string
}

func (n fxNamespace) ResourceName() string { return n.Name }

type fxNode struct{ Name, Zone string }

func (n fxNode) ResourceName() string { return n.Name }

type fxPod struct {
	Name, Namespace, Node, IP string
	Labels                    map[string]string
}

func (p fxPod) ResourceName() string         { return p.Namespace + "/" + p.Name }
func (p fxPod) GetNamespace() string         { return p.Namespace }
func (p fxPod) GetLabels() map[string]string { return p.Labels }

type fxService struct {
	Name, Namespace string
	Selector        map[string]string
	Port            int
}

func (s fxService) ResourceName() string           { return s.Namespace + "/" + s.Name }
func (s fxService) GetNamespace() string           { return s.Namespace }
func (s fxService) GetSelector() map[string]string { return s.Selector }

type fxServiceEntry struct {
	Name, Namespace, Host string
}

func (s fxServiceEntry) ResourceName() string { return s.Namespace + "/" + s.Name }

type fxBackend struct {
	Service string
	Weight  int
}

type fxRoute struct {
	Name, Namespace, Host string
	Gateway               string
	Backends              []fxBackend
}

func (r fxRoute) ResourceName() string { return r.Namespace + "/" + r.Name }
func (r fxRoute) GetNamespace() string { return r.Namespace }

type fxGateway struct {
	Name, Namespace, Secret string
	Port                    int
}

func (g fxGateway) ResourceName() string { return g.Namespace + "/" + g.Name }

type fxSecret struct {
	Name, Namespace string
	Cert            string
}

func (s fxSecret) ResourceName() string { return s.Namespace + "/" + s.Name }

type fxPolicy struct {
	Name, Namespace string
	Selector        map[string]string
	Allow           []string
}

func (p fxPolicy) ResourceName() string { return p.Namespace + "/" + p.Name }

type fxConfigMap struct {
	Name, Namespace string
	Data            map[string]string
}

func (c fxConfigMap) ResourceName() string { return c.Namespace + "/" + c.Name }

type fxMeshConfig struct {
	Domain       string
	DefaultRetry int
}

type fxWorkload struct {
	Key, Namespace, Node, Zone, IP string
	Labels                         map[string]string
}

func (w fxWorkload) ResourceName() string         { return w.Key }
func (w fxWorkload) GetNamespace() string         { return w.Namespace }
func (w fxWorkload) GetLabels() map[string]string { return w.Labels }

type fxServiceInfo struct {
	Key, Namespace, Hostname string
	Selector                 map[string]string
	External                 bool
}

func (s fxServiceInfo) ResourceName() string { return s.Key }

type fxEndpoints struct {
	Service string
	Addrs   []string
}

func (e fxEndpoints) ResourceName() string { return e.Service }

// fxNamed is the output shape of the many small derived collections whose
// content does not matter to the UI: a key and a description.
type fxNamed struct {
	Key  string
	Info string
}

func (n fxNamed) ResourceName() string { return n.Key }

type fxSummary struct {
	Namespaces, Workloads, Services, Clusters, Listeners int
	Domain                                               string
}

// fixture holds the graph and the inputs a test changes.
type fixture struct {
	g          *krt.Graph
	namespaces krt.Static[fxNamespace]
	pods       krt.Static[fxPod]
	services   krt.Static[fxService]
	routes     krt.Static[fxRoute]
	secrets    krt.Static[fxSecret]
	nodes      krt.Static[fxNode]
	entries    krt.Static[fxServiceEntry]
	gateways   krt.Static[fxGateway]
	policies   krt.Static[fxPolicy]
	configMaps krt.Static[fxConfigMap]
	mesh       krt.StaticSingleton[fxMeshConfig]
	endpoints  krt.Collection[fxEndpoints]
	names      []string // every collection's name, in creation order
}

func named(c interface{ Name() string }, f *fixture) { f.names = append(f.names, c.Name()) }

func newFixture() *fixture {
	g := krt.NewGraph()
	f := &fixture{g: g}

	// Sources.
	f.namespaces = krt.NewStatic[fxNamespace](g, krt.WithName("namespaces"))
	f.nodes = krt.NewStatic[fxNode](g, krt.WithName("nodes"))
	nodes := f.nodes
	f.pods = krt.NewStatic[fxPod](g, krt.WithName("pods"))
	f.services = krt.NewStatic[fxService](g, krt.WithName("services"))
	f.entries = krt.NewStatic[fxServiceEntry](g, krt.WithName("service-entries"))
	entries := f.entries
	f.routes = krt.NewStatic[fxRoute](g, krt.WithName("httproutes"))
	f.gateways = krt.NewStatic[fxGateway](g, krt.WithName("gateways"))
	gateways := f.gateways
	f.secrets = krt.NewStatic[fxSecret](g, krt.WithName("secrets"))
	f.policies = krt.NewStatic[fxPolicy](g, krt.WithName("authz-policies"))
	policies := f.policies
	f.configMaps = krt.NewStatic[fxConfigMap](g, krt.WithName("configmaps"))
	f.mesh = krt.NewStaticSingleton(g, &fxMeshConfig{Domain: "cluster.local", DefaultRetry: 2}, krt.WithName("mesh-config"))
	for _, c := range []interface{ Name() string }{f.namespaces, nodes, f.pods, f.services, entries, f.routes, gateways, f.secrets, policies, f.configMaps, f.mesh} {
		named(c, f)
	}

	// The mesh model.
	workloads := krt.NewCollection(g, f.pods, func(ctx krt.HandlerContext, p fxPod) *fxWorkload {
		if _, ok := krt.FetchOne(ctx, f.namespaces, krt.FilterKey(p.Namespace)); !ok {
			return nil
		}
		w := fxWorkload{Key: p.ResourceName(), Namespace: p.Namespace, Node: p.Node, IP: p.IP, Labels: p.Labels}
		if n, ok := krt.FetchOne(ctx, nodes, krt.FilterKey(p.Node)); ok {
			w.Zone = n.Zone
		}
		return &w
	}, krt.WithName("workloads"))
	byNode := krt.NewIndex(workloads, "by-node", func(w fxWorkload) []string { return []string{w.Node} })
	svcInfo := krt.NewCollection(g, f.services, func(ctx krt.HandlerContext, s fxService) *fxServiceInfo {
		mc, _ := krt.FetchOne(ctx, f.mesh)
		return &fxServiceInfo{Key: s.ResourceName(), Namespace: s.Namespace, Selector: s.Selector,
			Hostname: s.Name + "." + s.Namespace + ".svc." + mc.Domain}
	}, krt.WithName("service-info"))
	external := krt.NewCollection(g, entries, func(ctx krt.HandlerContext, e fxServiceEntry) *fxServiceInfo {
		return &fxServiceInfo{Key: e.ResourceName(), Namespace: e.Namespace, Hostname: e.Host, External: true}
	}, krt.WithName("external-services"))
	allServices := krt.Join(g, []krt.Collection[fxServiceInfo]{svcInfo, external}, krt.WithName("all-services"))
	f.endpoints = krt.NewCollection(g, allServices, func(ctx krt.HandlerContext, s fxServiceInfo) *fxEndpoints {
		if s.External {
			return &fxEndpoints{Service: s.Key, Addrs: []string{s.Hostname}}
		}
		ws := krt.Fetch(ctx, workloads, krt.FilterNamespace(s.Namespace), krt.FilterLabels(s.Selector))
		e := fxEndpoints{Service: s.Key}
		for _, w := range ws {
			e.Addrs = append(e.Addrs, w.IP)
		}
		return &e
	}, krt.WithName("endpoints"))
	nodeLoad := krt.NewCollection(g, nodes, func(ctx krt.HandlerContext, n fxNode) *fxNamed {
		ws := krt.Fetch(ctx, workloads, krt.FilterIndex(byNode, n.Name))
		return &fxNamed{Key: n.Name, Info: fmt.Sprintf("%d workloads in %s", len(ws), n.Zone)}
	}, krt.WithName("node-load"))
	nsStats := krt.NewCollection(g, f.namespaces, func(ctx krt.HandlerContext, ns fxNamespace) *fxNamed {
		ps := krt.Fetch(ctx, f.pods, krt.FilterNamespace(ns.Name))
		return &fxNamed{Key: ns.Name, Info: fmt.Sprintf("%d pods", len(ps))}
	}, krt.WithName("namespace-stats"))
	scopes := krt.NewCollection(g, f.namespaces, func(ctx krt.HandlerContext, ns fxNamespace) *fxNamed {
		svcs := krt.Fetch(ctx, allServices)
		return &fxNamed{Key: ns.Name, Info: fmt.Sprintf("sees %d services", len(svcs))}
	}, krt.WithName("sidecar-scopes"))
	routeChecks := krt.NewCollection(g, f.routes, func(ctx krt.HandlerContext, r fxRoute) *fxNamed {
		for _, b := range r.Backends {
			if b.Weight < 0 {
				panic(fmt.Sprintf("route %s: negative weight %d", r.ResourceName(), b.Weight))
			}
		}
		return &fxNamed{Key: r.ResourceName(), Info: "valid"}
	}, krt.WithName("route-validation"))
	vhosts := krt.NewManyCollection(g, f.routes, func(ctx krt.HandlerContext, r fxRoute) []fxNamed {
		var out []fxNamed
		for _, b := range r.Backends {
			if _, ok := krt.FetchOne(ctx, allServices, krt.FilterKey(r.Namespace+"/"+b.Service)); !ok {
				continue
			}
			out = append(out, fxNamed{Key: r.Host + "/" + b.Service, Info: fmt.Sprintf("weight %d", b.Weight)})
		}
		return out
	}, krt.WithName("virtual-hosts"))
	tls := krt.NewCollection(g, f.secrets, func(ctx krt.HandlerContext, s fxSecret) *fxNamed {
		if !strings.HasPrefix(s.Cert, "-----BEGIN") {
			ctx.Fail(errors.New("secret " + s.ResourceName() + ": no PEM certificate"))
			return nil
		}
		return &fxNamed{Key: s.ResourceName(), Info: "tls"}
	}, krt.WithName("tls-contexts"))
	authz := krt.NewCollection(g, policies, func(ctx krt.HandlerContext, p fxPolicy) *fxNamed {
		ws := krt.Fetch(ctx, workloads, krt.FilterNamespace(p.Namespace), krt.FilterLabels(p.Selector))
		return &fxNamed{Key: p.ResourceName(), Info: fmt.Sprintf("%d workloads allow %v", len(ws), p.Allow)}
	}, krt.WithName("authz-rules"))
	digests := krt.NewCollection(g, f.configMaps, func(ctx krt.HandlerContext, c fxConfigMap) *fxNamed {
		return &fxNamed{Key: c.ResourceName(), Info: fmt.Sprintf("%d keys", len(c.Data))}
	}, krt.WithName("config-digests"))
	meshSettings := krt.NewSingleton(g, func(ctx krt.HandlerContext) *fxNamed {
		mc, _ := krt.FetchOne(ctx, f.mesh)
		return &fxNamed{Key: krt.SingletonKey, Info: fmt.Sprintf("domain %s, retries %d", mc.Domain, mc.DefaultRetry)}
	}, krt.WithName("mesh-settings"))
	for _, c := range []interface{ Name() string }{workloads, svcInfo, external, allServices, f.endpoints, nodeLoad, nsStats, scopes, routeChecks, vhosts, tls, authz, digests, meshSettings} {
		named(c, f)
	}

	// The xDS outputs.
	clusters := krt.NewCollection(g, allServices, func(ctx krt.HandlerContext, s fxServiceInfo) *fxNamed {
		ms, _ := krt.FetchOne(ctx, meshSettings)
		return &fxNamed{Key: "outbound|" + s.Hostname, Info: ms.Info}
	}, krt.WithName("xds-clusters"))
	cla := krt.NewCollection(g, f.endpoints, func(ctx krt.HandlerContext, e fxEndpoints) *fxNamed {
		return &fxNamed{Key: "outbound|" + e.Service, Info: strings.Join(e.Addrs, ",")}
	}, krt.WithName("xds-endpoints"))
	listeners := krt.NewCollection(g, gateways, func(ctx krt.HandlerContext, gw fxGateway) *fxNamed {
		info := fmt.Sprintf("port %d", gw.Port)
		if gw.Secret != "" {
			if _, ok := krt.FetchOne(ctx, tls, krt.FilterKey(gw.Namespace+"/"+gw.Secret)); ok {
				info += " tls"
			}
		}
		return &fxNamed{Key: gw.ResourceName(), Info: info}
	}, krt.WithName("xds-listeners"))
	routeTables := krt.NewCollection(g, gateways, func(ctx krt.HandlerContext, gw fxGateway) *fxNamed {
		vs := krt.Fetch(ctx, vhosts)
		rs := krt.Fetch(ctx, routeChecks)
		return &fxNamed{Key: gw.ResourceName(), Info: fmt.Sprintf("%d vhosts, %d routes", len(vs), len(rs))}
	}, krt.WithName("xds-routes"))
	rbac := krt.NewCollection(g, authz, func(ctx krt.HandlerContext, a fxNamed) *fxNamed {
		return &fxNamed{Key: "rbac/" + a.Key, Info: a.Info}
	}, krt.WithName("xds-rbac"))
	scopeOut := krt.NewCollection(g, scopes, func(ctx krt.HandlerContext, s fxNamed) *fxNamed {
		return &fxNamed{Key: "scope/" + s.Key, Info: s.Info}
	}, krt.WithName("xds-scopes"))
	status := krt.NewCollection(g, nsStats, func(ctx krt.HandlerContext, s fxNamed) *fxNamed {
		l, _ := krt.FetchOne(ctx, nodeLoad, krt.FilterFunc(func(fxNamed) bool { return true }))
		return &fxNamed{Key: "status/" + s.Key, Info: s.Info + "; " + l.Info}
	}, krt.WithName("status-reports"))
	snapshot := krt.NewSingleton(g, func(ctx krt.HandlerContext) *fxSummary {
		mc, _ := krt.FetchOne(ctx, f.mesh)
		return &fxSummary{
			Namespaces: len(krt.Fetch(ctx, f.namespaces)), Workloads: len(krt.Fetch(ctx, workloads)),
			Services: len(krt.Fetch(ctx, allServices)), Clusters: len(krt.Fetch(ctx, clusters)),
			Listeners: len(krt.Fetch(ctx, listeners)), Domain: mc.Domain,
		}
	}, krt.WithName("xds-snapshot"))
	for _, c := range []interface{ Name() string }{clusters, cla, listeners, routeTables, rbac, scopeOut, status, snapshot} {
		named(c, f)
	}

	f.load()
	return f
}

// load writes the initial inputs: two namespaces, three nodes, a dozen pods,
// five services, routes (one with a negative weight, which panics), two
// gateways, secrets (one without a certificate, which fails) and 120 config
// maps, more than a page.
func (f *fixture) load() {
	f.g.Update(func(tx *krt.Txn) {
		f.namespaces.In(tx).Set(fxNamespace{Name: "default"}, fxNamespace{Name: "shop", Labels: map[string]string{"team": "shop"}})
		apps := []string{"web", "api", "db", "cart", "pay", "web", "api", "db", "cart", "pay", "web", "api"}
		for i, app := range apps {
			ns := "default"
			if app == "cart" || app == "pay" {
				ns = "shop"
			}
			f.pods.In(tx).Set(fxPod{Name: fmt.Sprintf("%s-%02d", app, i+1), Namespace: ns, Node: fmt.Sprintf("node-%d", i%3+1),
				IP: fmt.Sprintf("10.0.0.%d", i+1), Labels: map[string]string{"app": app}})
		}
		for _, app := range []string{"web", "api", "db", "cart", "pay"} {
			ns := "default"
			if app == "cart" || app == "pay" {
				ns = "shop"
			}
			f.services.In(tx).Set(fxService{Name: app, Namespace: ns, Selector: map[string]string{"app": app}, Port: 8080})
		}
		f.routes.In(tx).Set(
			fxRoute{Name: "web", Namespace: "default", Host: "web.example.com", Gateway: "ingress",
				Backends: []fxBackend{{Service: "web", Weight: 90}, {Service: "api", Weight: 10}}},
			fxRoute{Name: "shop", Namespace: "shop", Host: "shop.example.com", Gateway: "ingress",
				Backends: []fxBackend{{Service: "cart", Weight: 100}}},
			fxRoute{Name: "broken", Namespace: "shop", Host: "pay.example.com",
				Backends: []fxBackend{{Service: "pay", Weight: -5}}},
		)
		f.secrets.In(tx).Set(
			fxSecret{Name: "ingress-cert", Namespace: "default", Cert: "-----BEGIN CERTIFICATE-----"},
			fxSecret{Name: "bad-cert", Namespace: "shop", Cert: "not a certificate"},
		)
	})
	f.nodes.Set(fxNode{Name: "node-1", Zone: "eu-1a"}, fxNode{Name: "node-2", Zone: "eu-1b"}, fxNode{Name: "node-3", Zone: "eu-1c"})
	f.entries.Set(fxServiceEntry{Name: "payments-api", Namespace: "shop", Host: "api.payments.example"})
	f.gateways.Set(
		fxGateway{Name: "ingress", Namespace: "default", Secret: "ingress-cert", Port: 443},
		fxGateway{Name: "internal", Namespace: "shop", Port: 80},
	)
	cms := make([]fxConfigMap, 120)
	for i := range cms {
		cms[i] = fxConfigMap{Name: fmt.Sprintf("settings-%03d", i), Namespace: "default", Data: map[string]string{"n": fmt.Sprint(i)}}
	}
	f.configMaps.Set(cms...)
	f.policies.Set(fxPolicy{Name: "allow-web", Namespace: "default", Selector: map[string]string{"app": "api"}, Allow: []string{"default/web"}})
}

// sortedNames returns the fixture's collection names, sorted.
func (f *fixture) sortedNames() []string {
	out := append([]string(nil), f.names...)
	sort.Strings(out)
	return out
}
