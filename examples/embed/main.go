// Command embed shows krt embedded in an ordinary Go program, with no
// Kubernetes and no meshd: two static input collections (pods and
// services), a derived collection (each service's endpoints, from the pods
// its selector selects), an index, and a handler that prints each
// transaction's changes.
//
//	go run ./examples/embed
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/meshd/meshd/krt"
)

// Pod is an input: a workload with labels and an IP.
type Pod struct {
	Name, Namespace, IP string
	Labels              map[string]string
}

// ResourceName, GetNamespace and GetLabels tell krt the pod's key,
// namespace and labels, so Fetch can filter by them through indexes.
func (p Pod) ResourceName() string         { return p.Namespace + "/" + p.Name }
func (p Pod) GetNamespace() string         { return p.Namespace }
func (p Pod) GetLabels() map[string]string { return p.Labels }

// Service is an input: a name and a label selector.
type Service struct {
	Name, Namespace string
	Selector        map[string]string
}

func (s Service) ResourceName() string           { return s.Namespace + "/" + s.Name }
func (s Service) GetNamespace() string           { return s.Namespace }
func (s Service) GetSelector() map[string]string { return s.Selector }

// Endpoints is derived: the sorted IPs of the pods a service selects.
type Endpoints struct {
	Service string
	IPs     []string
}

func (e Endpoints) ResourceName() string { return e.Service }

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

// endpointsOf derives each service's endpoints. The transformation reads
// pods through Fetch, which records the dependency: a pod change
// recomputes only the services whose namespace and selector it matches.
func endpointsOf(g *krt.Graph, pods krt.Collection[Pod], services krt.Collection[Service]) krt.Collection[Endpoints] {
	return krt.NewCollection(g, services, func(ctx krt.HandlerContext, s Service) *Endpoints {
		selected := krt.Fetch(ctx, pods, krt.FilterNamespace(s.Namespace), krt.FilterLabels(s.Selector))
		ips := make([]string, 0, len(selected))
		for _, p := range selected {
			ips = append(ips, p.IP)
		}
		slices.Sort(ips)
		return &Endpoints{Service: s.ResourceName(), IPs: ips}
	}, krt.WithName("endpoints"))
}

// run builds the graph, applies a few changes and prints what happens.
func run(out io.Writer) error {
	g := krt.NewGraph()
	pods := krt.NewStatic[Pod](g, krt.WithName("pods"))
	services := krt.NewStatic[Service](g, krt.WithName("services"))

	endpoints := endpointsOf(g, pods, services)

	// An index answers "which pods have this IP?" without a scan.
	byIP := krt.NewIndex(pods, "by-ip", func(p Pod) []string { return []string{p.IP} })

	// Handlers run on their own goroutines once the graph runs; each gets
	// one batch per transaction, tagged with the version it committed as.
	batches := make(chan krt.Batch[Endpoints], 16)
	reg := endpoints.Register(func(b krt.Batch[Endpoints]) { batches <- b })
	defer reg.Unregister()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	defer func() { cancel(); <-done }()

	show := func() {
		b := <-batches
		for _, e := range b.Events {
			fmt.Fprintf(out, "v%d %-6s %s %s\n", b.Version, e.Type, e.Key, strings.Join(e.Latest().IPs, ","))
		}
	}

	// Several inputs in one transaction: the handler sees one batch.
	g.Update(func(tx *krt.Txn) {
		services.In(tx).Set(Service{Name: "web", Namespace: "shop", Selector: map[string]string{"app": "web"}})
		pods.In(tx).Set(
			Pod{Name: "web-1", Namespace: "shop", IP: "10.0.0.1", Labels: map[string]string{"app": "web"}},
			Pod{Name: "db-1", Namespace: "shop", IP: "10.0.0.9", Labels: map[string]string{"app": "db"}},
		)
	})
	show()

	pods.Set(Pod{Name: "web-2", Namespace: "shop", IP: "10.0.0.2", Labels: map[string]string{"app": "web"}})
	show()

	// A change no service selects is not an endpoints event at all: v3
	// (db-1's new IP) recomputes nothing and the handler's next batch is
	// v4's.
	pods.Set(Pod{Name: "db-1", Namespace: "shop", IP: "10.0.0.8", Labels: map[string]string{"app": "db"}})
	pods.Delete("shop/web-1")
	show()

	// Reads are consistent: through the snapshot g.Read hands out, every
	// collection is at the same committed version.
	g.Read(func(s *krt.Snapshot) {
		ep, _ := endpoints.At(s).Get("shop/web")
		owner := pods.At(s).Lookup(byIP, "10.0.0.2")
		fmt.Fprintf(out, "at v%d: %d pods, shop/web -> %s, 10.0.0.2 is %s\n",
			s.Version(), pods.At(s).Len(), strings.Join(ep.IPs, ","), owner[0].ResourceName())
	})
	return nil
}
