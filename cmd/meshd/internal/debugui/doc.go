// Package debugui serves meshd's debug UI and the JSON APIs behind it: the
// live dependency graph of a krt.Graph, one collection's items, events and
// errors, "explain" for one output key, the xDS proxy registry with a config
// dump per proxy, the problems the sources report and, among replicas that
// elect a leader, whether this one leads.
//
// The binary mounts the handler under its prefix (default "/debug/"):
//
//	ui := debugui.New(g, debugui.WithProxies(xdsView), debugui.WithProblems(srcView))
//	mux.Handle(ui.Prefix(), ui)
//	mux.Handle("/", ui.RedirectHandler()) // "/" -> /debug/ui
//	srv.RegisterOnShutdown(ui.Close)     // end open event streams
//
// # Routes
//
// Relative to the prefix; every API answers GET with JSON, errors as
// {"error": "..."} with a 4xx/5xx status:
//
//	ui                               the page (ui/index.html, with the modules ui/*.js, ui/style.css, ui/vendor/)
//	api/graph                        GraphSummary: every collection and edge
//	api/collections/{name}           CollectionDetail: counters, recent events and errors, upstreams, downstreams
//	api/collections/{name}/items     ItemsPage; query: prefix, offset, limit (default 50, max 1000)
//	api/explain?key=K[&collection=C] ExplainResult for every collection holding K (or only C); 404 if none
//	api/proxies                      ProxiesResult: the registry (close reasons, earlier connections), or available=false without an xDS server
//	api/proxies/{id}/config          the proxy's config dump; 404 if unknown
//	api/problems                     ProblemsResult: source problems, or available=false
//	api/replica                      ReplicaResult: this replica's role in the leader election, or available=false
//	api/clusters                     ClustersResult: the local cluster's name, each remote cluster's sync state, last list and watch, object counts, errors; or available=false
//	api/stream                       text/event-stream of "graph", "proxies", "problems", "replica" and "clusters" events
//	api/                             APIIndex: these APIs, each with what it answers
//
// Collection names and proxy ids are single path segments; escape slashes in
// them as %2F.
//
// The page is plain ES modules, one per tab or concern (ui/main.js wires
// them), with no build step. What it shows is in its URL's fragment
// (ui/location.js: #/collection/NAME, #/explain/KEY, #/proxy/ID, ...), so
// a link opens it and a reload keeps it. The JSON fields it reads are declared in one
// place, ui/fields.js, through which every answer is decoded; a test holds
// that file to the Go types above, so renaming or dropping a field the page
// reads fails the build's tests rather than blanking the page.
//
// Item values are encoded with encoding/json, proto messages (and struct
// fields holding them) with protojson; an item type whose fields do not show
// what it holds can implement DebugValuer.
//
// # Secrets
//
// Nothing the handler serves shows a secret: the data of Kubernetes Secrets
// among the items, values under credential-named fields (privateKey,
// password, an env var DB_PASSWORD), and anything that looks like a
// private key, a JSON Web Token or a Bearer/Basic credential in items,
// config dumps, node metadata, errors, NACK reasons and problems are
// replaced by Redacted (see RedactString, SensitiveKey, RedactTree). Keys
// are kept, so that one sees that a secret is there.
//
// # Concurrency
//
// New starts no goroutine. An event stream runs in the goroutine net/http
// gives its request and ends when the request's context ends or Close is
// called; nothing outlives a request. A Handler is safe for concurrent use.
package debugui
