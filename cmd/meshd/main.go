// Command meshd is a service-mesh control plane: it reads Kubernetes
// objects (from a folder of YAML, a cluster, or its bundled demo mesh),
// derives the mesh incrementally with krt, and serves it over ADS (xDS).
// Run `meshd --help` for its flags; docs/operations.md explains them.
// `meshd agent` runs beside a workload instead, keeping its certificate
// from meshd's CA (docs/security.md). `meshd status`, `meshd proxies`,
// `meshd explain` and `meshd translate` are the operator's command line
// (package ctl, docs/operations.md). `meshd create-remote-secret` prints
// the Secret that joins a remote cluster (docs/multicluster.md).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/meshd/meshd/cmd/meshd/app"
	"github.com/meshd/meshd/cmd/meshd/internal/ctl"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "agent" {
		os.Exit(runAgent(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "create-remote-secret" {
		os.Exit(runCreateRemoteSecret(os.Args[2:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && ctl.IsCommand(os.Args[1]) {
		os.Exit(ctl.Run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(run())
}

// run returns the exit code: 0 after a clean shutdown, 1 when meshd failed,
// 2 for a bad command line.
func run() int {
	cfg, err := app.ParseFlags(os.Args[1:], os.Stdout)
	if errors.Is(err, pflag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "meshd: %v\n", err)
		return 2
	}
	var hold *app.LogHold
	cfg.Logger, hold, err = app.NewHeldLogger(os.Stderr, cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		fmt.Fprintf(os.Stderr, "meshd: %v\n", err)
		return 2
	}
	a, err := app.New(cfg)
	if err != nil {
		// A failed start-up is the one line naming the flag or file at
		// fault; what was logged on the way there would only bury it.
		hold.Drop()
		fmt.Fprintf(os.Stderr, "meshd: %v\n", err)
		return 1
	}
	hold.Release()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := a.Run(ctx); err != nil {
		return 1
	}
	return 0
}
