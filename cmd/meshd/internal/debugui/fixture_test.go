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

// fxModel holds the mesh-model collections the xDS outputs read.
type fxModel struct {
	workloads    krt.Collection[fxWorkload]
	byNode       krt.Index[fxWorkload]
	allServices  krt.Collection[fxServiceInfo]
	nodeLoad     krt.Collection[fxNamed]
	nsStats      krt.Collection[fxNamed]
	scopes       krt.Collection[fxNamed]
	routeChecks  krt.Collection[fxNamed]
	vhosts       krt.Collection[fxNamed]
	tls          krt.Collection[fxNamed]
	authz        krt.Collection[fxNamed]
	meshSettings krt.Singleton[fxNamed]
}

// track records c's name in f.names, in creation order, and returns c.
func track[C interface{ Name() string }](f *fixture, c C) C {
	f.names = append(f.names, c.Name())
	return c
}

// newFixture builds the graph, stage by stage in a fixed creation order, and
// loads its inputs.
func newFixture() *fixture {
	f := &fixture{g: krt.NewGraph()}
	f.addSources()
	m := &fxModel{}
	f.addWorkloads(m)
	f.addServices(m)
	f.addNodeAndNamespaceViews(m)
	f.addRouteAndPolicyChecks(m)
	f.addXDSOutputs(m)
	f.load()
	return f
}

// addSources creates the static inputs.
func (f *fixture) addSources() {
	g := f.g
	f.namespaces = track(f, krt.NewStatic[fxNamespace](g, krt.WithName("namespaces")))
	f.nodes = track(f, krt.NewStatic[fxNode](g, krt.WithName("nodes")))
	f.pods = track(f, krt.NewStatic[fxPod](g, krt.WithName("pods")))
	f.services = track(f, krt.NewStatic[fxService](g, krt.WithName("services")))
	f.entries = track(f, krt.NewStatic[fxServiceEntry](g, krt.WithName("service-entries")))
	f.routes = track(f, krt.NewStatic[fxRoute](g, krt.WithName("httproutes")))
	f.gateways = track(f, krt.NewStatic[fxGateway](g, krt.WithName("gateways")))
	f.secrets = track(f, krt.NewStatic[fxSecret](g, krt.WithName("secrets")))
	f.policies = track(f, krt.NewStatic[fxPolicy](g, krt.WithName("authz-policies")))
	f.configMaps = track(f, krt.NewStatic[fxConfigMap](g, krt.WithName("configmaps")))
	f.mesh = track(f, krt.NewStaticSingleton(g, &fxMeshConfig{Domain: "cluster.local", DefaultRetry: 2}, krt.WithName("mesh-config")))
	// A name longer than a node's least width: its node widens, and the
	// whole name shows.
	track(f, krt.NewStatic[fxNamed](g, krt.WithName(longName)))
}

// longName is the name of the fixture's collection with the longest name.
const longName = "folder/security.istio.io/PeerAuthentication"

// addWorkloads derives a workload from each pod in a known namespace, with
// its node's zone, and indexes workloads by node.
func (f *fixture) addWorkloads(m *fxModel) {
	m.workloads = track(f, krt.NewCollection(f.g, f.pods, func(ctx krt.HandlerContext, p fxPod) *fxWorkload {
		if _, ok := krt.FetchOne(ctx, f.namespaces, krt.FilterKey(p.Namespace)); !ok {
			return nil
		}
		w := fxWorkload{Key: p.ResourceName(), Namespace: p.Namespace, Node: p.Node, IP: p.IP, Labels: p.Labels}
		if n, ok := krt.FetchOne(ctx, f.nodes, krt.FilterKey(p.Node)); ok {
			w.Zone = n.Zone
		}
		return &w
	}, krt.WithName("workloads")))
	m.byNode = krt.NewIndex(m.workloads, "by-node", func(w fxWorkload) []string { return []string{w.Node} })
}

// addServices joins services and service entries into all-services, and
// derives each one's endpoints.
func (f *fixture) addServices(m *fxModel) {
	g := f.g
	svcInfo := track(f, krt.NewCollection(g, f.services, func(ctx krt.HandlerContext, s fxService) *fxServiceInfo {
		mc, _ := krt.FetchOne(ctx, f.mesh)
		return &fxServiceInfo{Key: s.ResourceName(), Namespace: s.Namespace, Selector: s.Selector,
			Hostname: s.Name + "." + s.Namespace + ".svc." + mc.Domain}
	}, krt.WithName("service-info")))
	external := track(f, krt.NewCollection(g, f.entries, func(ctx krt.HandlerContext, e fxServiceEntry) *fxServiceInfo {
		return &fxServiceInfo{Key: e.ResourceName(), Namespace: e.Namespace, Hostname: e.Host, External: true}
	}, krt.WithName("external-services")))
	m.allServices = track(f, krt.Join(g, []krt.Collection[fxServiceInfo]{svcInfo, external}, krt.WithName("all-services")))
	f.endpoints = track(f, krt.NewCollection(g, m.allServices, func(ctx krt.HandlerContext, s fxServiceInfo) *fxEndpoints {
		if s.External {
			return &fxEndpoints{Service: s.Key, Addrs: []string{s.Hostname}}
		}
		ws := krt.Fetch(ctx, m.workloads, krt.FilterNamespace(s.Namespace), krt.FilterLabels(s.Selector))
		e := fxEndpoints{Service: s.Key}
		for _, w := range ws {
			e.Addrs = append(e.Addrs, w.IP)
		}
		return &e
	}, krt.WithName("endpoints")))
}

// addNodeAndNamespaceViews derives per-node load, per-namespace pod counts
// and per-namespace sidecar scopes.
func (f *fixture) addNodeAndNamespaceViews(m *fxModel) {
	g := f.g
	m.nodeLoad = track(f, krt.NewCollection(g, f.nodes, func(ctx krt.HandlerContext, n fxNode) *fxNamed {
		ws := krt.Fetch(ctx, m.workloads, krt.FilterIndex(m.byNode, n.Name))
		return &fxNamed{Key: n.Name, Info: fmt.Sprintf("%d workloads in %s", len(ws), n.Zone)}
	}, krt.WithName("node-load")))
	m.nsStats = track(f, krt.NewCollection(g, f.namespaces, func(ctx krt.HandlerContext, ns fxNamespace) *fxNamed {
		ps := krt.Fetch(ctx, f.pods, krt.FilterNamespace(ns.Name))
		return &fxNamed{Key: ns.Name, Info: fmt.Sprintf("%d pods", len(ps))}
	}, krt.WithName("namespace-stats")))
	m.scopes = track(f, krt.NewCollection(g, f.namespaces, func(ctx krt.HandlerContext, ns fxNamespace) *fxNamed {
		svcs := krt.Fetch(ctx, m.allServices)
		return &fxNamed{Key: ns.Name, Info: fmt.Sprintf("sees %d services", len(svcs))}
	}, krt.WithName("sidecar-scopes")))
}

// addRouteAndPolicyChecks derives route validation (which panics on a
// negative weight), virtual hosts, TLS contexts (which fail without a PEM
// certificate), authorization rules, config digests and mesh settings.
func (f *fixture) addRouteAndPolicyChecks(m *fxModel) {
	g := f.g
	m.routeChecks = track(f, krt.NewCollection(g, f.routes, func(ctx krt.HandlerContext, r fxRoute) *fxNamed {
		for _, b := range r.Backends {
			if b.Weight < 0 {
				panic(fmt.Sprintf("route %s: negative weight %d", r.ResourceName(), b.Weight))
			}
		}
		return &fxNamed{Key: r.ResourceName(), Info: "valid"}
	}, krt.WithName("route-validation")))
	m.vhosts = track(f, krt.NewManyCollection(g, f.routes, func(ctx krt.HandlerContext, r fxRoute) []fxNamed {
		var out []fxNamed
		for _, b := range r.Backends {
			if _, ok := krt.FetchOne(ctx, m.allServices, krt.FilterKey(r.Namespace+"/"+b.Service)); !ok {
				continue
			}
			out = append(out, fxNamed{Key: r.Host + "/" + b.Service, Info: fmt.Sprintf("weight %d", b.Weight)})
		}
		return out
	}, krt.WithName("virtual-hosts")))
	m.tls = track(f, krt.NewCollection(g, f.secrets, func(ctx krt.HandlerContext, s fxSecret) *fxNamed {
		if !strings.HasPrefix(s.Cert, "-----BEGIN") {
			ctx.Fail(errors.New("secret " + s.ResourceName() + ": no PEM certificate"))
			return nil
		}
		return &fxNamed{Key: s.ResourceName(), Info: "tls"}
	}, krt.WithName("tls-contexts")))
	m.authz = track(f, krt.NewCollection(g, f.policies, func(ctx krt.HandlerContext, p fxPolicy) *fxNamed {
		ws := krt.Fetch(ctx, m.workloads, krt.FilterNamespace(p.Namespace), krt.FilterLabels(p.Selector))
		return &fxNamed{Key: p.ResourceName(), Info: fmt.Sprintf("%d workloads allow %v", len(ws), p.Allow)}
	}, krt.WithName("authz-rules")))
	track(f, krt.NewCollection(g, f.configMaps, func(ctx krt.HandlerContext, c fxConfigMap) *fxNamed {
		return &fxNamed{Key: c.ResourceName(), Info: fmt.Sprintf("%d keys", len(c.Data))}
	}, krt.WithName("config-digests")))
	m.meshSettings = track(f, krt.NewSingleton(g, func(ctx krt.HandlerContext) *fxNamed {
		mc, _ := krt.FetchOne(ctx, f.mesh)
		return &fxNamed{Key: krt.SingletonKey, Info: fmt.Sprintf("domain %s, retries %d", mc.Domain, mc.DefaultRetry)}
	}, krt.WithName("mesh-settings")))
}

// addXDSOutputs derives the xDS resources, status reports and the snapshot
// summary from the mesh model.
func (f *fixture) addXDSOutputs(m *fxModel) {
	g := f.g
	clusters := track(f, krt.NewCollection(g, m.allServices, func(ctx krt.HandlerContext, s fxServiceInfo) *fxNamed {
		ms, _ := krt.FetchOne(ctx, m.meshSettings)
		return &fxNamed{Key: "outbound|" + s.Hostname, Info: ms.Info}
	}, krt.WithName("xds-clusters")))
	track(f, krt.NewCollection(g, f.endpoints, func(ctx krt.HandlerContext, e fxEndpoints) *fxNamed {
		return &fxNamed{Key: "outbound|" + e.Service, Info: strings.Join(e.Addrs, ",")}
	}, krt.WithName("xds-endpoints")))
	listeners := track(f, krt.NewCollection(g, f.gateways, func(ctx krt.HandlerContext, gw fxGateway) *fxNamed {
		info := fmt.Sprintf("port %d", gw.Port)
		if gw.Secret != "" {
			if _, ok := krt.FetchOne(ctx, m.tls, krt.FilterKey(gw.Namespace+"/"+gw.Secret)); ok {
				info += " tls"
			}
		}
		return &fxNamed{Key: gw.ResourceName(), Info: info}
	}, krt.WithName("xds-listeners")))
	track(f, krt.NewCollection(g, f.gateways, func(ctx krt.HandlerContext, gw fxGateway) *fxNamed {
		vs := krt.Fetch(ctx, m.vhosts)
		rs := krt.Fetch(ctx, m.routeChecks)
		return &fxNamed{Key: gw.ResourceName(), Info: fmt.Sprintf("%d vhosts, %d routes", len(vs), len(rs))}
	}, krt.WithName("xds-routes")))
	track(f, krt.NewCollection(g, m.authz, func(ctx krt.HandlerContext, a fxNamed) *fxNamed {
		return &fxNamed{Key: "rbac/" + a.Key, Info: a.Info}
	}, krt.WithName("xds-rbac")))
	track(f, krt.NewCollection(g, m.scopes, func(ctx krt.HandlerContext, s fxNamed) *fxNamed {
		return &fxNamed{Key: "scope/" + s.Key, Info: s.Info}
	}, krt.WithName("xds-scopes")))
	track(f, krt.NewCollection(g, m.nsStats, func(ctx krt.HandlerContext, s fxNamed) *fxNamed {
		l, _ := krt.FetchOne(ctx, m.nodeLoad, krt.FilterFunc(func(fxNamed) bool { return true }))
		return &fxNamed{Key: "status/" + s.Key, Info: s.Info + "; " + l.Info}
	}, krt.WithName("status-reports")))
	track(f, krt.NewSingleton(g, func(ctx krt.HandlerContext) *fxSummary {
		mc, _ := krt.FetchOne(ctx, f.mesh)
		return &fxSummary{
			Namespaces: len(krt.Fetch(ctx, f.namespaces)), Workloads: len(krt.Fetch(ctx, m.workloads)),
			Services: len(krt.Fetch(ctx, m.allServices)), Clusters: len(krt.Fetch(ctx, clusters)),
			Listeners: len(krt.Fetch(ctx, listeners)), Domain: mc.Domain,
		}
	}, krt.WithName("xds-snapshot")))
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
