package debugui

import (
	"embed"
	"io/fs"
	"net/http"
)

// The page and everything it loads; nothing is fetched from elsewhere.
//
//go:embed ui/index.html ui/app.js ui/style.css ui/vendor/dagre.min.js ui/vendor/dagre.LICENSE
var assets embed.FS

func uiFS() fs.FS {
	sub, err := fs.Sub(assets, "ui")
	if err != nil {
		panic(err) // "ui" is embedded above, so this cannot happen
	}
	return sub
}

// assetServer serves the page's scripts and styles. They are small and
// change with the binary, so browsers revalidate rather than cache them.
func assetServer() http.Handler {
	files := http.FileServerFS(uiFS())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
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
	if _, err := w.Write(page); err != nil {
		h.opts.log.Debug("debug UI: writing page", "error", err)
	}
}
