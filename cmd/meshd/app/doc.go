// Package app is the meshd binary, minus its main: it turns a Config into
// running sources, the mesh model, the xDS server and the debug HTTP server,
// and stops them all when its context ends.
//
// It is importable so that a program can run meshd with collections of its
// own added to the graph (Config.Extend; see examples/custom-collection).
//
// The life of an App:
//
//  1. cfg, err := app.ParseFlags(os.Args[1:], os.Stdout) (or fill a Config)
//  2. a, err := app.New(cfg): builds the graph, loads the sources' initial
//     state, binds both listeners. It starts no goroutine, so every error
//     of the command line, the config files or the addresses surfaces here,
//     before anything runs.
//  3. err = a.Run(ctx): runs everything until ctx ends, then stops accepting
//     connections, closes the xDS streams and the debug server, stops the
//     graph's handlers, and returns once every goroutine it started has
//     returned. A nil error means a clean shutdown.
//
// If Run is never called, Close releases the listeners.
//
// After start-up a file that turns bad is reported (log, metrics, debug UI)
// and the last good configuration keeps being served; only start-up errors
// are fatal.
package app
