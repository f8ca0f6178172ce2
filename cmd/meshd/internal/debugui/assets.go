package debugui

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
)

// The page and everything it loads; nothing is fetched from elsewhere.
//
//go:embed ui/index.html ui/*.js ui/style.css ui/vendor/dagre.min.js ui/vendor/dagre.LICENSE
var assets embed.FS

func uiFS() fs.FS {
	sub, err := fs.Sub(assets, "ui")
	if err != nil {
		panic(err) // "ui" is embedded above, so this cannot happen
	}
	return sub
}

// pagePolicy is the page's Content-Security-Policy: it runs only the
// scripts served beside it (the modules under ui/ and the vendored
// dagre), with no inline script, eval or plugin, and talks only to its own
// origin, so that a value shown on the page could not run even if it got
// past the text-only rendering.
const pagePolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// assetServer serves the page's scripts and styles. They are small and
// change with the binary, so browsers revalidate rather than cache them.
// Browsers run a module script only when it comes with a JavaScript type,
// so .js files get one whatever the system's MIME table says.
func assetServer() http.Handler {
	files := http.FileServerFS(uiFS())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if path.Ext(r.URL.Path) == ".js" {
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		}
		files.ServeHTTP(w, r)
	})
}

func (h *Handler) serveIndex(w http.ResponseWriter, r *http.Request) {
	page, err := assets.ReadFile("ui/index.html")
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Content-Security-Policy", pagePolicy)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if _, err := w.Write(page); err != nil {
		h.opts.log.Debug("debug UI: writing page", "error", err)
	}
}
