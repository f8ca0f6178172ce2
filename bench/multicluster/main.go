package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/sources/kube/kubetest"
)

func main() {
	services := flag.Int("services", 1000, "Services in the remote cluster")
	pods := flag.Int("pods", 10000, "ready Pods in the remote cluster, spread over the Services")
	rounds := flag.Int("rounds", 3, "joins to measure, the remote leaving between two")
	changes := flag.Int("changes", 0, "pod readiness flips per row of the change table (with 1, 2 and 3 clusters; starts a second remote API server); 0: no change table")
	flag.Parse()
	if *services < 1 || *pods < *services || *rounds < 1 || *changes < 0 {
		fmt.Fprintln(os.Stderr, "multicluster: want -services >= 1, -pods >= -services, -rounds >= 1, -changes >= 0")
		os.Exit(2)
	}
	ctx := context.Background()
	b := bench{services: *services, pods: *pods, rounds: *rounds, changes: *changes}
	err := b.start(ctx)
	if err == nil {
		err = b.run(ctx)
	}
	b.stop() // before Fatalf, which exits
	if err != nil {
		metric.Fatalf("%v", err)
	}
}

// bench is one run: its sizes and the remote API servers, west and, for
// the change table, east.
type bench struct {
	services, pods, rounds, changes int
	west, east                      *kubetest.Env
}

func (b *bench) start(ctx context.Context) error {
	var err error
	if b.west, err = kubetest.Start(ctx, kubetest.WithServiceIPRange("10.96.0.0/16")); err != nil {
		return fmt.Errorf("kube-apiserver west: %w", err)
	}
	if b.changes > 0 {
		if b.east, err = kubetest.Start(ctx, kubetest.WithServiceIPRange("10.96.0.0/16")); err != nil {
			return fmt.Errorf("kube-apiserver east: %w", err)
		}
	}
	return nil
}

func (b *bench) stop() {
	for _, e := range []*kubetest.Env{b.west, b.east} {
		if e != nil {
			e.Stop()
		}
	}
}

// run seeds the remotes and prints a row per join, then the change table.
func (b *bench) run(ctx context.Context) error {
	start := time.Now()
	if err := seed(ctx, b.west, b.services, b.pods, netWest); err != nil {
		return fmt.Errorf("seeding west: %w", err)
	}
	if b.east != nil {
		if err := seed(ctx, b.east, b.services, b.pods, netEast); err != nil {
			return fmt.Errorf("seeding east: %w", err)
		}
	}
	fmt.Printf("remotes seeded with %d services and %d pods each in %s (not measured)\n\n", b.services, b.pods, time.Since(start).Round(time.Second))
	west, err := os.ReadFile(b.west.Kubeconfig)
	if err != nil {
		return err
	}
	m := newMesh()
	defer m.stop()
	fmt.Println("| round | join until served | CPU | heap per remote | endpoints |")
	fmt.Println("|---:|---:|---:|---:|---:|")
	for i := range b.rounds {
		r := m.join(west, b.pods)
		fmt.Printf("| %d | %.0f ms | %.0f ms | %.1f MiB | %d |\n", i+1, metric.MS(r.wall), metric.MS(r.cpu), metric.MiB(r.heap), r.endpoints)
		if i < b.rounds-1 || b.east != nil {
			m.leave()
		}
	}
	if b.east == nil {
		return nil
	}
	remotes := []remote{{name: "west", network: netWest}, {name: "east", network: netEast}}
	for i, env := range []*kubetest.Env{b.west, b.east} {
		if remotes[i].kubeconfig, err = os.ReadFile(env.Kubeconfig); err != nil {
			return err
		}
		if remotes[i].client, err = kubernetes.NewForConfig(env.Config); err != nil {
			return fmt.Errorf("client of %s: %w", remotes[i].name, err)
		}
	}
	return changeTable(ctx, m, remotes, b.services, b.pods, b.changes)
}
