// Command custom-collection runs meshd with a collection of its own added
// to the graph: for every namespace, how many services it holds and which.
// The collection is derived incrementally like meshd's own, so it shows in
// the debug UI (its node, items, events, "explain") and in /metrics.
//
//	go run ./examples/custom-collection            # the demo mesh
//	go run ./examples/custom-collection --config-dir DIR
//
// It takes meshd's flags. Open http://127.0.0.1:15014/debug/ui and click
// the "namespace-services" node.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"

	"github.com/meshd/meshd/cmd/meshd/app"
	"github.com/meshd/meshd/krt"
)

// NamespaceServices is one item of the custom collection.
type NamespaceServices struct {
	Namespace string   `json:"namespace"`
	Count     int      `json:"count"`
	Services  []string `json:"services"`
}

// ResourceName keys the item by namespace.
func (n NamespaceServices) ResourceName() string { return n.Namespace }

// AddNamespaceServices derives the collection from the mesh model: each
// namespace fetches the services in it. krt records that fetch, so a
// service change recomputes only its own namespace's item.
func AddNamespaceServices(m *app.Model) krt.Collection[NamespaceServices] {
	return krt.NewCollection(m.Graph, m.Inputs.Namespaces, func(ctx krt.HandlerContext, ns *corev1.Namespace) *NamespaceServices {
		svcs := krt.Fetch(ctx, m.Mesh.Services, krt.FilterNamespace(ns.Name))
		names := make([]string, 0, len(svcs))
		for _, s := range svcs {
			names = append(names, s.Name)
		}
		slices.Sort(names)
		return &NamespaceServices{Namespace: ns.Name, Count: len(names), Services: names}
	}, krt.WithName("namespace-services"))
}

// extend is the Config.Extend hook: it adds the collection and hands it to
// got, if set, for tests.
func extend(got func(krt.Collection[NamespaceServices])) func(*app.Model) error {
	return func(m *app.Model) error {
		c := AddNamespaceServices(m)
		if got != nil {
			got(c)
		}
		return nil
	}
}

func main() {
	cfg, err := app.ParseFlags(os.Args[1:], os.Stdout)
	if errors.Is(err, pflag.ErrHelp) {
		return
	}
	if err == nil {
		cfg.Logger, err = app.NewLogger(os.Stderr, cfg.LogLevel, cfg.LogFormat)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "custom-collection:", err)
		os.Exit(2)
	}
	cfg.Extend = extend(nil)
	a, err := app.New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "custom-collection:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := a.Run(ctx); err != nil {
		os.Exit(1)
	}
}
