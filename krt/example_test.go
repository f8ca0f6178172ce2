package krt_test

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/meshd/meshd/krt"
)

type Pod struct {
	Name, Namespace string
	Labels          map[string]string
	IP              string
}

func (p Pod) ResourceName() string         { return p.Namespace + "/" + p.Name }
func (p Pod) GetNamespace() string         { return p.Namespace }
func (p Pod) GetLabels() map[string]string { return p.Labels }

type Service struct {
	Name, Namespace string
	Selector        map[string]string
}

func (s Service) ResourceName() string           { return s.Namespace + "/" + s.Name }
func (s Service) GetNamespace() string           { return s.Namespace }
func (s Service) GetSelector() map[string]string { return s.Selector }

type Endpoints struct {
	Service string
	IPs     []string
}

func (e Endpoints) ResourceName() string { return e.Service }

// Example builds a two-level graph: the endpoints of each service are the
// IPs of the pods its selector selects.
func Example() {
	g := krt.NewGraph()
	pods := krt.NewStatic[Pod](g, krt.WithName("pods"))
	services := krt.NewStatic[Service](g, krt.WithName("services"))
	endpoints := krt.NewCollection(g, services, func(ctx krt.HandlerContext, svc Service) *Endpoints {
		selected := krt.Fetch(ctx, pods, krt.FilterNamespace(svc.Namespace), krt.FilterLabels(svc.Selector))
		ips := make([]string, 0, len(selected))
		for _, p := range selected {
			ips = append(ips, p.IP)
		}
		sort.Strings(ips)
		return &Endpoints{Service: svc.ResourceName(), IPs: ips}
	}, krt.WithName("endpoints"))

	services.Set(Service{Name: "web", Namespace: "default", Selector: map[string]string{"app": "web"}})
	pods.Set(
		Pod{Name: "web-1", Namespace: "default", Labels: map[string]string{"app": "web"}, IP: "10.0.0.1"},
		Pod{Name: "db-1", Namespace: "default", Labels: map[string]string{"app": "db"}, IP: "10.0.0.9"},
	)
	pods.Set(Pod{Name: "web-2", Namespace: "default", Labels: map[string]string{"app": "web"}, IP: "10.0.0.2"})

	ep, _ := endpoints.Get("default/web")
	fmt.Println(strings.Join(ep.IPs, " "))
	// Output: 10.0.0.1 10.0.0.2
}

// ExampleCollection_Register shows handlers receiving one batch per
// transaction, delivered while the graph runs.
func ExampleCollection_Register() {
	g := krt.NewGraph()
	pods := krt.NewStatic[Pod](g)
	pods.Set(Pod{Name: "a", Namespace: "ns", IP: "10.0.0.1"})

	got := make(chan krt.Batch[Pod], 10)
	reg := pods.Register(func(b krt.Batch[Pod]) { got <- b }, krt.WithReplay())
	defer reg.Unregister()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- g.Run(ctx) }()

	pods.Set(Pod{Name: "a", Namespace: "ns", IP: "10.0.0.2"})
	pods.Delete("ns/a")
	for range 3 {
		b := <-got
		for _, e := range b.Events {
			fmt.Printf("v%d %s %s %s\n", b.Version, e.Type, e.Key, e.Latest().IP)
		}
	}
	cancel()
	<-done
	// Output:
	// v1 add ns/a 10.0.0.1
	// v2 update ns/a 10.0.0.2
	// v3 delete ns/a 10.0.0.2
}
