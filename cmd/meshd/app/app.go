package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/meshd/meshd/cmd/meshd/internal/debugui"
	"github.com/meshd/meshd/cmd/meshd/internal/metrics"
	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/security"
	"github.com/meshd/meshd/sources"
	"github.com/meshd/meshd/sources/multicluster"
	"github.com/meshd/meshd/xds"
)

// Model is what New built, handed to Config.Extend so a program embedding
// meshd can derive collections of its own from the mesh's.
type Model struct {
	// Graph holds every collection; collections added to it show in the
	// debug UI and in /metrics like meshd's own.
	Graph *krt.Graph
	// Inputs are the sources' collections (joined, when there are several).
	Inputs sources.Inputs
	// Mesh is the mesh model derived from Inputs, whose xDS resources the
	// server serves.
	Mesh *collections.Model
}

// App is a configured meshd, ready to Run. Create it with New.
type App struct {
	cfg   Config
	log   *slog.Logger
	model *Model
	ready *readiness

	// components run alongside the graph in Run: sources, the xDS server.
	components []component
	// metrics are the extra Prometheus collectors of the components.
	metrics []prometheus.Collector
	// proxies and problems feed the debug UI's Proxies and Problems tabs;
	// nil when no component offers them.
	proxies  debugui.Proxies
	problems problemView
	xds      *xds.Server
	// serverDemand holds the server listener names gRPC xDS servers ask
	// for, the only ones the model builds.
	serverDemand *xds.Demand
	// cluster is set when a cluster is watched; leader is set with
	// --leader-elect.
	cluster *cluster
	leader  *leadership
	// remotes are the remote clusters, with --remote-kubeconfig or
	// --remote-secrets.
	remotes *multicluster.Remotes

	// ca is meshd's certificate authority, with --ca; serving is the xDS
	// listener's certificate from it, unless --xds-tls-cert.
	ca      *security.Authority
	serving *servingCert

	// plainLis is the plaintext xDS port, with --xds-plaintext-addr.
	xdsLis, plainLis, debugLis net.Listener
	debug                      *http.Server
}

// component is something Run runs until its context ends.
type component struct {
	name string
	run  func(ctx context.Context) error
}

// New builds meshd from cfg: the graph, the sources (their initial state
// loaded), the mesh model, the xDS server, and the two listeners, bound.
// It starts no goroutine. Errors are one line, naming the flag or file at
// fault.
func New(cfg Config) (_ *App, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.ShutdownTimeout == 0 {
		cfg.ShutdownTimeout = 3 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	a := &App{
		cfg:   cfg,
		log:   log,
		model: &Model{Graph: krt.NewGraph(krt.WithLogger(log.With("component", "krt")))},
		ready: &readiness{},
	}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()

	if err := a.build(); err != nil {
		return nil, err
	}

	if a.xdsLis, err = net.Listen("tcp", cfg.XDSAddr); err != nil {
		return nil, fmt.Errorf("--xds-addr: %w", err)
	}
	if cfg.XDSPlaintextAddr != "" {
		if a.plainLis, err = net.Listen("tcp", cfg.XDSPlaintextAddr); err != nil {
			return nil, fmt.Errorf("--xds-plaintext-addr: %w", err)
		}
	}
	if a.debugLis, err = net.Listen("tcp", cfg.DebugAddr); err != nil {
		return nil, fmt.Errorf("--debug-addr: %w", err)
	}
	routes := debugRoutes{
		ready:    a.ready,
		registry: metrics.NewRegistry(a.model.Graph, a.metrics...),
	}
	a.mountUI(&routes)
	a.debug = &http.Server{
		Handler:           routes.mux(),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	if routes.closeUI != nil {
		// The UI's event streams would hold Shutdown until its timeout.
		a.debug.RegisterOnShutdown(routes.closeUI)
	}
	return a, nil
}

// Model returns the mesh model New built.
func (a *App) Model() *Model { return a.model }

// XDSAddr returns the address the xDS server listens on: the configured one,
// with the port chosen by the system if it was 0.
func (a *App) XDSAddr() string { return a.xdsLis.Addr().String() }

// XDSPlaintextAddr returns the address of the plaintext xDS port, as
// XDSAddr; "" without --xds-plaintext-addr.
func (a *App) XDSPlaintextAddr() string {
	if a.plainLis == nil {
		return ""
	}
	return a.plainLis.Addr().String()
}

// DebugAddr returns the address of the debug HTTP server, as XDSAddr.
func (a *App) DebugAddr() string { return a.debugLis.Addr().String() }

// Close releases the listeners of an App that will not Run. Run closes
// them itself.
func (a *App) Close() {
	for _, l := range []net.Listener{a.xdsLis, a.plainLis, a.debugLis} {
		if l != nil {
			l.Close()
		}
	}
}

// Run serves until ctx ends or a component fails, then shuts everything
// down and returns once every goroutine it started has returned. It
// returns nil when ctx ended, else the first component's error.
func (a *App) Run(ctx context.Context) error {
	a.announce()
	eg, ctx := errgroup.WithContext(ctx)
	eg.Go(func() error { return quiet(a.model.Graph.Run(ctx)) })
	for _, c := range a.components {
		eg.Go(func() error {
			if err := quiet(c.run(ctx)); err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			return nil
		})
	}
	eg.Go(func() error {
		if err := a.debug.Serve(a.debugLis); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("debug server: %w", err)
		}
		return nil
	})
	eg.Go(func() error {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), a.cfg.ShutdownTimeout)
		defer cancel()
		if err := a.debug.Shutdown(sctx); err != nil {
			a.log.Warn("debug server did not shut down in time; closing its connections", "error", err)
			a.debug.Close()
		}
		return nil
	})
	eg.Go(func() error {
		if a.ready.wait(ctx) {
			a.log.Info("ready: every source synced and the first xDS version is published", "version", a.model.Graph.Version())
		}
		return nil
	})
	err := eg.Wait()
	// Components that never ran (New failed part way, or a component
	// returned early) leave their listeners to us.
	a.Close()
	if err != nil {
		a.log.Error("meshd stopped", "error", err)
		return err
	}
	a.log.Info("meshd stopped")
	return nil
}

// announce logs where meshd listens and warns about an exposed debug port.
func (a *App) announce() {
	debug := "http://" + a.DebugAddr()
	a.log.Info("meshd serving",
		"xds", a.XDSAddr(),
		"xdsTLS", a.cfg.xdsTLS(),
		"xdsPlaintext", a.XDSPlaintextAddr(),
		"ui", debug+"/debug/ui",
		"metrics", debug+"/metrics",
		"demo", a.cfg.Demo())
	if !isLoopback(a.cfg.DebugAddr) {
		a.log.Warn("the debug server listens beyond loopback: anyone who can reach it sees the whole mesh and can take profiles",
			"debug-addr", a.DebugAddr())
	}
	if a.plainLis != nil && !isLoopback(a.cfg.XDSPlaintextAddr) {
		a.log.Warn("the plaintext xDS port listens beyond loopback: its clients and their tokens are not protected by TLS",
			"xds-plaintext-addr", a.XDSPlaintextAddr())
	}
	if !a.cfg.xdsTLS() && !isLoopback(a.cfg.XDSAddr) {
		a.log.Warn("xDS is served in plaintext beyond loopback: give --ca (TLS from meshd's CA) or --xds-tls-cert",
			"xds-addr", a.XDSAddr())
	}
	if exposesNodeClaim(a.cfg) {
		a.log.Warn("namespace isolation trusts the namespace each proxy's node claims: a client that reaches the xDS port can claim any; bind it to client certificates with --namespace-isolation-identity certificate",
			"xds-addr", a.XDSAddr())
	}
}

// exposesNodeClaim reports whether namespace isolation trusts the
// namespace a node claims while clients beyond this machine can connect.
func exposesNodeClaim(c Config) bool {
	return c.NamespaceIsolation && c.isolationIdentity() != IdentityCertificate && !isLoopback(c.XDSAddr)
}

// quiet drops the error a component returns because its context ended.
func quiet(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return err
}
