package app

import (
	"fmt"
	"net/http"
	"net/http/pprof"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// debugRoutes are the handlers of the debug HTTP server.
type debugRoutes struct {
	ready    *readiness
	registry *prometheus.Registry
	// ui serves the debug UI under "/debug/"; redirect answers "/". Nil:
	// no UI is mounted.
	ui       http.Handler
	redirect http.Handler
	closeUI  func() // ends the UI's open event streams
}

// mux lays out the debug server:
//
//	/healthz       200 while the process serves HTTP at all
//	/readyz        200 once every source synced and xDS published, else 503
//	/metrics       Prometheus
//	/debug/pprof/  Go profiles
//	/debug/        the debug UI and its JSON API; "/" redirects to it
func (d debugRoutes) mux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", d.serveReady)
	mux.Handle("GET /metrics", promhttp.HandlerFor(d.registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	if d.ui != nil {
		mux.Handle("/debug/", d.ui)
		mux.Handle("/{$}", d.redirect)
	}
	return mux
}

func (d debugRoutes) serveReady(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if p := d.ready.pending(); len(p) > 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "not ready: waiting for %s\n", strings.Join(p, ", "))
		return
	}
	fmt.Fprintln(w, "ready")
}
