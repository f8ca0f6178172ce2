package app

// build creates the sources, the mesh model and the xDS server in the
// graph, and registers them as components, readiness conditions and
// metrics.
func (a *App) build() error {
	return nil
}

// mountUI mounts the debug UI on the debug server's routes.
func (a *App) mountUI(r *debugRoutes) {}
