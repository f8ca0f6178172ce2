package krt_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/meshd/meshd/krt"
)

func ExampleNewCollection() {
	g := krt.NewGraph()
	in := krt.NewStatic[Num](g)
	doubled := krt.NewCollection(g, in, func(ctx krt.HandlerContext, n Num) *Num {
		if n.N == 0 {
			return nil // no output for this input
		}
		return &Num{Key: n.Key, N: 2 * n.N}
	})
	in.Set(Num{"a", 1}, Num{"b", 0}, Num{"c", 3})
	for _, n := range doubled.List() {
		fmt.Println(n.Key, n.N)
	}
	// Output:
	// a 2
	// c 6
}

func ExampleNewManyCollection() {
	g := krt.NewGraph()
	eps := krt.NewStatic[Endpoints](g)
	addrs := krt.NewManyCollection(g, eps, func(ctx krt.HandlerContext, e Endpoints) []Address {
		var out []Address
		for _, ip := range e.IPs {
			out = append(out, Address{IP: ip, Service: e.Service})
		}
		return out
	})
	eps.Set(Endpoints{Service: "web", IPs: []string{"10.0.0.1", "10.0.0.2"}})
	fmt.Println(addrs.Len())
	// Output: 2
}

func ExampleFetch() {
	g := krt.NewGraph()
	pods := krt.NewStatic[Pod](g)
	services := krt.NewStatic[Service](g)
	// For each pod, the services whose selector selects it: found through
	// the services' selector index, and recomputed only when a service
	// that selects (or selected) this pod's labels changes.
	podServices := krt.NewCollection(g, pods, func(ctx krt.HandlerContext, p Pod) *Workload {
		svcs := krt.Fetch(ctx, services, krt.FilterNamespace(p.Namespace), krt.FilterSelects(p.Labels))
		w := &Workload{Key: p.ResourceName()}
		for _, s := range svcs {
			w.Services = append(w.Services, s.Name)
		}
		return w
	})
	pods.Set(Pod{Name: "web-1", Namespace: "shop", Labels: map[string]string{"app": "web", "tier": "front"}})
	services.Set(
		Service{Name: "web", Namespace: "shop", Selector: map[string]string{"app": "web"}},
		Service{Name: "front", Namespace: "shop", Selector: map[string]string{"tier": "front"}},
		Service{Name: "db", Namespace: "shop", Selector: map[string]string{"app": "db"}},
	)
	w, _ := podServices.Get("shop/web-1")
	fmt.Println(strings.Join(w.Services, ","))
	// Output: front,web
}

func ExampleNewIndex() {
	g := krt.NewGraph()
	pods := krt.NewStatic[Pod](g)
	byIP := krt.NewIndex(pods, "ip", func(p Pod) []string { return []string{p.IP} })
	pods.Set(Pod{Name: "a", Namespace: "x", IP: "10.0.0.1"}, Pod{Name: "b", Namespace: "y", IP: "10.0.0.1"})
	for _, p := range byIP.Lookup("10.0.0.1") {
		fmt.Println(p.ResourceName())
	}
	// Output:
	// x/a
	// y/b
}

func ExampleJoin() {
	g := krt.NewGraph()
	overrides := krt.NewStatic[Num](g)
	defaults := krt.NewStatic[Num](g)
	effective := krt.Join(g, []krt.Collection[Num]{overrides, defaults}) // first wins
	defaults.Set(Num{"timeout", 10}, Num{"retries", 3})
	overrides.Set(Num{"timeout", 30})
	for _, n := range effective.List() {
		fmt.Println(n.Key, n.N)
	}
	// Output:
	// retries 3
	// timeout 30
}

func ExampleNewSingleton() {
	g := krt.NewGraph()
	pods := krt.NewStatic[Pod](g)
	count := krt.NewSingleton(g, func(ctx krt.HandlerContext) *Num {
		return &Num{Key: "pods", N: len(krt.Fetch(ctx, pods))}
	})
	pods.Set(Pod{Name: "a", Namespace: "x"}, Pod{Name: "b", Namespace: "x"})
	n, _ := count.Value()
	fmt.Println(n.N)
	// Output: 2
}

func ExampleGraph_Update() {
	g := krt.NewGraph()
	pods := krt.NewStatic[Pod](g)
	services := krt.NewStatic[Service](g)
	// Both writes commit together, as one version.
	v := g.Update(func(tx *krt.Txn) {
		services.In(tx).Set(Service{Name: "web", Namespace: "x", Selector: map[string]string{"app": "web"}})
		pods.In(tx).Set(Pod{Name: "web-1", Namespace: "x", Labels: map[string]string{"app": "web"}})
	})
	fmt.Println(v, pods.Len(), services.Len())
	// Output: 1 1 1
}

func ExampleGraph_Read() {
	m := newModelGraph()
	m.services.Set(Service{Name: "web", Namespace: "a", Selector: map[string]string{"app": "web"}})
	m.pods.Set(Pod{Name: "p", Namespace: "a", Labels: map[string]string{"app": "web"}, IP: "10.0.0.7"})
	// Every read through the snapshot sees the same committed version: a
	// workload and the endpoints derived from it always agree, however
	// long the snapshot is held and whatever writers commit meanwhile.
	m.g.Read(func(s *krt.Snapshot) {
		w, _ := m.workloads.At(s).Get("a/p")
		e, _ := m.endpoints.At(s).Get("a/web")
		fmt.Println(s.Version() == m.g.Version(), w.IP, e.IPs)
	})
	// Output: true 10.0.0.7 [10.0.0.7]
}

func ExampleNewStaticSingleton() {
	g := krt.NewGraph()
	limit := krt.NewStaticSingleton(g, &Num{N: 10})
	in := krt.NewStatic[Num](g)
	capped := krt.NewCollection(g, in, func(ctx krt.HandlerContext, n Num) *Num {
		l, _ := krt.FetchOne(ctx, limit) // a dependency on the one item
		return &Num{Key: n.Key, N: min(n.N, l.N)}
	})
	in.Set(Num{"a", 50})
	before, _ := capped.Get("a")
	limit.Set(Num{N: 20}) // recomputes every input that read the limit
	after, _ := capped.Get("a")
	fmt.Println(before.N, after.N)
	// Output: 10 20
}

// A stream of changes, such as an informer's, is queued rather than
// committed one by one: the queued updates commit together, in order.
func ExampleGraph_UpdateLater() {
	g := krt.NewGraph()
	pods := krt.NewStatic[Num](g)
	for i := range 1000 {
		g.UpdateLater(func(tx *krt.Txn) {
			pods.In(tx).Set(Num{Key: "restarts", N: i + 1})
		})
	}
	if _, err := g.Flush(context.Background()); err != nil {
		panic(err)
	}
	last, _ := pods.Get("restarts")
	fmt.Println(last.N)
	// Output: 1000
}
