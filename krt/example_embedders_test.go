package krt_test

import (
	"context"
	"fmt"

	"github.com/meshd/meshd/krt"
)

func ExampleRegistration_WaitVersion() {
	g := krt.NewGraph()
	pods := krt.NewStatic[Pod](g)
	var seen []string // written by the handler, read after WaitVersion
	reg := pods.Register(func(b krt.Batch[Pod]) {
		for _, e := range b.Events {
			seen = append(seen, fmt.Sprintf("v%d %s %s", b.Version, e.Type, e.Key))
		}
	})
	defer reg.Unregister()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- g.Run(ctx) }()

	pods.Set(Pod{Name: "a", Namespace: "ns"})
	v := pods.Delete("ns/a")
	// No sleep: return once the handler has handled every batch up to v.
	if err := reg.WaitVersion(ctx, v); err != nil {
		fmt.Println(err)
	}
	fmt.Println(seen)
	cancel()
	<-done
	// Output: [v1 add ns/a v2 delete ns/a]
}

func ExamplePartialFetch() {
	g := krt.NewGraph()
	pods := krt.NewStatic[Pod](g)
	services := krt.NewStatic[Service](g)
	services.Set(Service{Name: "web", Namespace: "shop"})
	runs := 0
	endpoints := krt.NewCollection(g, services, func(ctx krt.HandlerContext, s Service) *Endpoints {
		runs++
		// Depend on the pods' IPs only, not on the rest of each pod.
		ips := krt.PartialFetch(ctx, pods, func(p Pod) string { return p.IP }, krt.FilterNamespace(s.Namespace))
		return &Endpoints{Service: s.ResourceName(), IPs: ips}
	})
	pods.Set(Pod{Name: "a", Namespace: "shop", IP: "10.0.0.1"})
	pods.Set(Pod{Name: "a", Namespace: "shop", IP: "10.0.0.1", Labels: map[string]string{"v": "2"}})
	e, _ := endpoints.Get("shop/web")
	fmt.Println(e.IPs, runs) // the label change did not recompute
	// Output: [10.0.0.1] 2
}

func ExampleTrigger() {
	g := krt.NewGraph()
	services := krt.NewStatic[Service](g)
	services.Set(Service{Name: "web", Namespace: "shop"})
	domain := "cluster.local" // outside the graph, e.g. read from a file
	reload := krt.NewTrigger(g, krt.WithName("domain"))
	hosts := krt.NewCollection(g, services, func(ctx krt.HandlerContext, s Service) *Num {
		reload.Depend(ctx)
		return &Num{Key: s.Name + "." + s.Namespace + ".svc." + domain}
	})
	domain = "mesh.example"
	reload.Fire() // the file changed: recompute what read it
	for _, h := range hosts.List() {
		fmt.Println(h.Key)
	}
	// Output: web.shop.svc.mesh.example
}

func ExampleNewStatusCollection() {
	type valid struct{ OK bool }
	g := krt.NewGraph()
	services := krt.NewStatic[Service](g)
	statuses, endpoints := krt.NewStatusCollection(g, services, func(ctx krt.HandlerContext, s Service) (*valid, *Endpoints) {
		if len(s.Selector) == 0 {
			return &valid{OK: false}, nil // a status, but no output
		}
		return &valid{OK: true}, &Endpoints{Service: s.ResourceName()}
	}, krt.WithName("endpoints"))
	services.Set(Service{Name: "web", Namespace: "a", Selector: map[string]string{"app": "web"}}, Service{Name: "ext", Namespace: "a"})
	for _, st := range statuses.List() {
		fmt.Println(st.Key, st.Status.OK)
	}
	fmt.Println(endpoints.Len())
	// Output:
	// a/ext false
	// a/web true
	// 1
}

func ExampleKeyOf() {
	g := krt.NewGraph()
	pods := krt.NewStatic[Pod](g)
	fmt.Println(krt.KeyOf[Pod](pods, Pod{Name: "web-1", Namespace: "shop"}))
	// Output: shop/web-1
}

func ExampleInline() {
	g := krt.NewGraph()
	pods := krt.NewStatic[Pod](g)
	dirty := map[string]bool{} // written by the handler inside Set
	reg := pods.Register(func(b krt.Batch[Pod]) {
		for _, e := range b.Events {
			dirty[e.Key] = true
		}
	}, krt.Inline())
	defer reg.Unregister()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- g.Run(ctx) }()
	// Batches wait for Run; once it delivers, a Set returns after the
	// inline handler has had the Set's events.
	if err := reg.WaitVersion(ctx, pods.Set(Pod{Name: "a", Namespace: "ns"})); err != nil {
		fmt.Println(err)
	}
	pods.Set(Pod{Name: "b", Namespace: "ns"})
	fmt.Println(dirty["ns/a"], dirty["ns/b"])
	cancel()
	<-done
	// Output: true true
}

func ExampleFetchSeq() {
	g := krt.NewGraph()
	pods := krt.NewStatic[Pod](g)
	services := krt.NewStatic[Service](g)
	services.Set(Service{Name: "web", Namespace: "shop"})
	pods.Set(Pod{Name: "b", Namespace: "shop", IP: "10.0.0.2"}, Pod{Name: "a", Namespace: "shop", IP: "10.0.0.1"})
	endpoints := krt.NewCollection(g, services, func(ctx krt.HandlerContext, s Service) *Endpoints {
		// Each pod is handed over in key order; no slice of pods is made.
		var ips []string
		for p := range krt.FetchSeq(ctx, pods, krt.FilterNamespace(s.Namespace)) {
			ips = append(ips, p.IP)
		}
		return &Endpoints{Service: s.ResourceName(), IPs: ips}
	})
	pods.Delete("shop/b")
	e, _ := endpoints.Get("shop/web")
	fmt.Println(e.IPs)
	// Output: [10.0.0.1]
}
