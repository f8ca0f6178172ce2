package app

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/meshd/meshd/cmd/meshd/internal/debugui"
	"github.com/meshd/meshd/cmd/meshd/internal/demo"
	"github.com/meshd/meshd/cmd/meshd/internal/metrics"
	"github.com/meshd/meshd/cmd/meshd/internal/problem"
	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
	"github.com/meshd/meshd/sources/folder"
	"github.com/meshd/meshd/xds"
)

// staleAfter is how long a proxy may leave a response unanswered before
// the xDS registry, hence the debug UI and meshd_xds_stale_proxies, calls
// it stale.
const staleAfter = 10 * time.Second

// build creates the sources, the mesh model and the xDS server in the
// graph, and registers them as components, readiness conditions and
// metrics.
func (a *App) build() error {
	g := a.model.Graph
	in, err := a.buildSources()
	if err != nil {
		return err
	}
	if in.MeshConfig, err = a.buildMeshConfig(in); err != nil {
		return err
	}
	a.model.Inputs = in
	a.serverDemand = xds.NewDemand(g, "ServerListenerDemand", func(name string) bool {
		return strings.HasPrefix(name, collections.ServerListenerNamePrefix)
	})
	a.model.Mesh = collections.Build(g, in, collections.WithNamespaceViews(a.cfg.NamespaceIsolation),
		collections.WithClusterName(a.cfg.ClusterName), collections.WithServerListenerDemand(a.serverDemand.Names()))
	a.reportPolicies()
	a.reportRoutes()
	if a.cfg.Extend != nil {
		if err := a.cfg.Extend(a.model); err != nil {
			return fmt.Errorf("extending the mesh model: %w", err)
		}
	}
	a.buildStatus()
	return a.buildXDS()
}

// buildSources creates the folder and cluster sources the configuration
// names, or the demo mesh when it names none, and loads the folder's
// initial state, failing on any file that does not load.
func (a *App) buildSources() (sources.Inputs, error) {
	g := a.model.Graph
	var all []sources.Inputs

	if a.cfg.Demo() || a.cfg.ConfigDir != "" {
		var src *folder.Source
		name := "demo"
		if a.cfg.Demo() {
			src = folder.NewFS(g, demo.FS, folder.WithName("demo"), folder.WithLogger(a.log.With("source", "demo")))
		} else {
			name = a.cfg.ConfigDir
			fi, err := os.Stat(a.cfg.ConfigDir)
			if err != nil {
				return sources.Inputs{}, fmt.Errorf("--config-dir: %w", err)
			}
			if !fi.IsDir() {
				return sources.Inputs{}, fmt.Errorf("--config-dir %s: not a directory", a.cfg.ConfigDir)
			}
			src = folder.NewDir(g, a.cfg.ConfigDir, folder.WithLogger(a.log.With("source", "folder")))
		}
		if err := src.Load(); err != nil {
			return sources.Inputs{}, fmt.Errorf("--config-dir %s: %w", name, err)
		}
		// A problem names its file, which names the directory.
		flagName := name
		if !a.cfg.Demo() {
			flagName = "--config-dir"
		}
		if err := firstError(flagName, src.Problems()); err != nil {
			return sources.Inputs{}, err
		}
		in := src.Inputs()
		all = append(all, in)
		a.problems = append(a.problems, folderProblems(src))
		a.ready.add("source "+name, in.Synced()...)
		a.components = append(a.components, component{"source " + name, src.Run})
		a.log.Info("loaded manifests", "source", name, "objects", src.Stats().Objects, "files", src.Stats().Files)
	}
	if a.cfg.Kubeconfig != "" || a.cfg.InCluster {
		in, err := a.buildKube()
		if err != nil {
			return sources.Inputs{}, err
		}
		all = append(all, in)
	}
	if a.cfg.multicluster() {
		in, err := a.buildRemotes()
		if err != nil {
			return sources.Inputs{}, err
		}
		all = append(all, in)
	}
	in := all[0]
	for _, other := range all[1:] {
		in = sources.JoinInputs(a.model.Graph, in, other)
	}
	return in, nil
}

// firstError returns the first error-severity problem of a source's initial
// load as a one-line error, with a count of the others.
func firstError(source string, ps []folder.Problem) error {
	var errs []folder.Problem
	for _, p := range ps {
		if p.Severity == folder.SeverityError {
			errs = append(errs, p)
		}
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("%s: %s", source, errs[0])
	}
	return fmt.Errorf("%s: %s (and %d more problems)", source, errs[0], len(errs)-1)
}

// pushOptions are the xDS server's push mode and timing, from the flags
// and the mesh config: --push-debounce (or pushDebounce) is the paced
// mode's window and the debounce mode's quiet period.
func (a *App) pushOptions() []xds.Option {
	mc, _ := a.model.Mesh.MeshConfig.Value()
	debounce := time.Duration(mc.PushDebounce)
	if a.cfg.PushDebounce > 0 {
		debounce = a.cfg.PushDebounce
	}
	mode := xds.PushMode(a.cfg.PushMode)
	if mode == "" {
		mode = xds.PushPaced
	}
	opts := []xds.Option{xds.WithPushMode(mode), xds.WithPushWindow(debounce), xds.WithDebounce(debounce)}
	if mc.PushDebounceMax > 0 {
		opts = append(opts, xds.WithMaxDelay(max(time.Duration(mc.PushDebounceMax), debounce)))
	}
	return opts
}

// buildXDS creates the xDS server over the model's resources.
func (a *App) buildXDS() error {
	m := a.model.Mesh
	opts := append(a.pushOptions(),
		xds.WithLogger(a.log.With("component", "xds")),
		// Streams end at once on shutdown; this bounds how long their
		// connections may take to close, so SIGTERM exits in seconds.
		xds.WithShutdownGrace(a.cfg.ShutdownTimeout),
	)
	opts, err := a.withTransport(opts)
	if err != nil {
		return err
	}
	if a.cfg.XDSMaxConnectionAge > 0 {
		grace := a.cfg.XDSConnectionAgeGrace
		if grace == 0 {
			grace = 10 * time.Second
		}
		opts = append(opts, xds.WithMaxConnectionAge(a.cfg.XDSMaxConnectionAge, grace))
	}
	opts = append(opts, xds.WithMaxSubscribedNames(a.cfg.XDSMaxSubscribedNames),
		xds.WithUnansweredAfter(staleAfter))
	opts = append(opts, a.isolationOptions()...)
	s := xds.New(a.model.Graph, xdsSources(m, a.serverDemand, a.cfg.NamespaceIsolation),
		append(opts, xds.WithClientVariants(collections.ClientVariant),
			// Only Envoy warms updated clusters and listeners on what
			// they name; gRPC clients are spared the resends.
			xds.WithWarmingFor(xds.EnvoyNode))...)
	a.xds = s
	a.ready.add("xDS server (first version)", s.Ready())
	// Every source has added its problem report by now.
	a.metrics = append(a.metrics, metrics.NewXDSCollector(s), metrics.NewProblemsCollector(a.problems))
	a.proxies = proxyView{s: s, mtls: func(key string) (collections.WorkloadMTLS, bool) {
		w, ok := m.WorkloadSecurity(key)
		return w.MTLS, ok
	}}
	a.components = append(a.components, component{"xds", func(ctx context.Context) error {
		if a.plainLis != nil {
			return s.Serve(ctx, a.xdsLis, a.plainLis)
		}
		return s.Serve(ctx, a.xdsLis)
	}})
	return nil
}

// withTransport adds the CA's signing service, when --ca is set, and the
// listener's TLS to opts.
func (a *App) withTransport(opts []xds.Option) ([]xds.Option, error) {
	opts, err := a.withCA(opts)
	if err != nil {
		return nil, err
	}
	tc, err := a.xdsTLSConfig()
	if err != nil {
		return nil, err
	}
	if tc != nil {
		opts = append(opts, xds.WithTLSConfig(tc))
	}
	return opts, nil
}

// isolationOptions are the xDS server's options of namespace isolation:
// by the node's claim, or bound to the client certificate, anonymous
// clients getting what --xds-anonymous allows.
func (a *App) isolationOptions() []xds.Option {
	if !a.cfg.NamespaceIsolation {
		return nil
	}
	opts := []xds.Option{xds.WithNamespaceIsolation(xds.NodeNamespace)}
	if a.cfg.isolationIdentity() == IdentityCertificate {
		opts = append(opts, xds.WithPeerNamespace(xds.SPIFFENamespace), xds.WithAnonymous(anonymousPolicy(a.cfg.XDSAnonymous)))
	}
	return opts
}

// xdsSources are the model's resources, with the clusters gRPC clients
// and the route configurations and server listeners older gRPC C-core
// clients are sent instead (collections.ClientVariant); the streams
// naming server listeners feed serverDemand.
func xdsSources(m *collections.Model, serverDemand *xds.Demand, isolation bool) []xds.Source {
	return []xds.Source{
		resourceSource(xds.ClusterType, m.Clusters, isolation),
		formSource(xds.ClusterType, m.Clusters, collections.GRPCClusterForm, isolation,
			xds.AsVariant[collections.Resource[*clusterv3.Cluster]](collections.VariantGRPC, collections.VariantGRPCLegacy)),
		resourceSource(xds.EndpointType, m.ClusterLoadAssignments, isolation),
		resourceSource(xds.ListenerType, m.Listeners, isolation,
			xds.WithDemand[collections.Resource[*listenerv3.Listener]](serverDemand)),
		resourceSource(xds.RouteType, m.RouteConfigurations, isolation),
		resourceSource(xds.RouteType, m.LegacyGRPCRouteConfigurations, isolation,
			xds.AsVariant[collections.Resource[*routev3.RouteConfiguration]](collections.VariantGRPCLegacy)),
		resourceSource(xds.ListenerType, m.LegacyServerListeners, isolation,
			xds.AsVariant[collections.Resource[*listenerv3.Listener]](collections.VariantGRPCLegacy)),
	}
}

// resourceSource serves a collection of the model's resources, those
// marked NamedOnly by name only; with isolation, each resource carries
// its visibility (Resource.VisibleTo). Without, no visibility is computed
// or stored.
func resourceSource[M proto.Message](typeURL string, c krt.Collection[collections.Resource[M]], isolation bool, opts ...xds.SourceOption[collections.Resource[M]]) xds.Source {
	return formSource(typeURL, c, collections.Resource[M].Serialized, isolation, opts...)
}

// formSource is resourceSource serving the form of each resource that
// form gives.
func formSource[M proto.Message](typeURL string, c krt.Collection[collections.Resource[M]], form func(collections.Resource[M]) (string, *anypb.Any),
	isolation bool, opts ...xds.SourceOption[collections.Resource[M]]) xds.Source {
	opts = append(opts, xds.WithNamedOnly(collections.Resource[M].IsNamedOnly))
	if isolation {
		opts = append(opts, xds.WithVisibility(resourceVisibility[M]))
	}
	return xds.NewPackedSource(typeURL, c, form, opts...)
}

// resourceVisibility turns a resource's namespaces into its visibility:
// nil is every namespace, less those it is hidden from.
func resourceVisibility[M proto.Message](r collections.Resource[M]) xds.Visibility {
	if r.VisibleTo == nil {
		return xds.VisibleToAllExcept(r.HiddenFrom...)
	}
	return xds.VisibleTo(r.VisibleTo...)
}

// folderProblems reports a folder source's problems to the debug UI.
func folderProblems(src *folder.Source) func() []problem.Problem {
	return func() []problem.Problem { return fromFolderProblems(src.Problems()) }
}

// fromFolderProblems adapts a folder source's problems, one row each, but
// one row per kind without a collection: real manifests carry dozens of
// Deployments and ServiceAccounts, whose rows would bury real errors. The
// row names the first object and counts the others.
func fromFolderProblems(ps []folder.Problem) []problem.Problem {
	var out []problem.Problem
	rowOfKind, more := map[string]int{}, map[string]int{}
	for _, p := range ps {
		if p.UnknownKind != "" {
			if _, seen := rowOfKind[p.UnknownKind]; seen {
				more[p.UnknownKind]++
				continue
			}
			rowOfKind[p.UnknownKind] = len(out)
		}
		out = append(out, fromFolderProblem(p))
	}
	for kind, n := range more {
		row := &out[rowOfKind[kind]]
		row.Object = fmt.Sprintf("%s and %d more", row.Object, n)
	}
	return out
}

func fromFolderProblem(p folder.Problem) problem.Problem {
	where := p.Path
	if p.Line > 0 {
		where = fmt.Sprintf("%s:%d", where, p.Line)
	}
	msg := p.Message
	if p.Doc > 0 {
		msg = fmt.Sprintf("document %d: %s", p.Doc, msg)
	}
	severity := problem.SeverityError
	if p.Severity == folder.SeverityWarning {
		msg = "warning: " + msg
		severity = problem.SeverityWarning
	}
	return problem.Problem{Source: where, Object: p.Object, Error: strings.TrimSpace(msg), Severity: severity}
}

// problemView gathers the problems every source reports for the debug UI.
type problemView []func() []problem.Problem

// Problems implements problem.Lister.
func (v problemView) Problems() []problem.Problem {
	out := []problem.Problem{}
	for _, f := range v {
		out = append(out, f()...)
	}
	return out
}

// mountUI mounts the debug UI, over the graph and whatever proxy registry
// and problem reports the components offer, on the debug server's routes.
func (a *App) mountUI(r *debugRoutes) {
	opts := []debugui.Option{debugui.WithLogger(a.log.With("component", "debugui"))}
	if a.proxies != nil {
		opts = append(opts, debugui.WithProxies(a.proxies))
	}
	opts = append(opts, debugui.WithProblems(a.problems))
	if a.leader != nil {
		opts = append(opts, debugui.WithReplica(a.leader.status))
	}
	if a.remotes != nil {
		opts = append(opts, debugui.WithClusters(a.cfg.ClusterName, a.remotes.Status))
	}
	ui := debugui.New(a.model.Graph, opts...)
	r.ui, r.redirect, r.closeUI = ui, ui.RedirectHandler(), ui.Close
}
