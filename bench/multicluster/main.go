package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/sources/kube/kubetest"
)

func main() {
	services := flag.Int("services", 1000, "Services in the remote cluster")
	pods := flag.Int("pods", 10000, "ready Pods in the remote cluster, spread over the Services")
	rounds := flag.Int("rounds", 3, "joins to measure, the remote leaving between two")
	flag.Parse()
	if *services < 1 || *pods < *services || *rounds < 1 {
		fmt.Fprintln(os.Stderr, "multicluster: want -services >= 1, -pods >= -services, -rounds >= 1")
		os.Exit(2)
	}
	ctx := context.Background()
	env, err := kubetest.Start(ctx, kubetest.WithServiceIPRange("10.96.0.0/16"))
	if err != nil {
		metric.Fatalf("kube-apiserver: %v", err)
	}
	err = run(ctx, env, *services, *pods, *rounds)
	env.Stop() // before Fatalf, which exits
	if err != nil {
		metric.Fatalf("%v", err)
	}
}

// run seeds the remote and prints a row per join.
func run(ctx context.Context, env *kubetest.Env, services, pods, rounds int) error {
	start := time.Now()
	if err := seed(ctx, env, services, pods); err != nil {
		return fmt.Errorf("seeding the remote: %w", err)
	}
	fmt.Printf("remote seeded with %d services and %d pods in %s (not measured)\n\n", services, pods, time.Since(start).Round(time.Second))
	kubeconfig, err := os.ReadFile(env.Kubeconfig)
	if err != nil {
		return err
	}
	m := newMesh()
	defer m.stop()
	fmt.Println("| round | join until served | CPU | heap per remote | endpoints |")
	fmt.Println("|---:|---:|---:|---:|---:|")
	for i := range rounds {
		r := m.join(kubeconfig, pods)
		fmt.Printf("| %d | %.0f ms | %.0f ms | %.1f MiB | %d |\n", i+1, metric.MS(r.wall), metric.MS(r.cpu), metric.MiB(r.heap), r.endpoints)
		if i < rounds-1 {
			m.leave()
		}
	}
	return nil
}
