package krt_test

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/meshd/meshd/krt"
)

// host has none of the accessor methods krt looks for: every accessor
// comes from an option.
type host struct {
	Name, Zone string
	Tags       map[string]string // what the host is
	Wants      map[string]string // which hosts it peers with
	Revision   int               // bookkeeping, not content
}

func hostKey(h host) string { return h.Zone + "/" + h.Name }

// hostNames lists, from one transformation, the hosts of c passing filters.
func hostNames(g *krt.Graph, c krt.Collection[host], filters ...krt.Filter) string {
	s := krt.NewSingleton(g, func(ctx krt.HandlerContext) *[]string {
		var names []string
		for _, h := range krt.Fetch(ctx, c, filters...) {
			names = append(names, h.Name)
		}
		return &names
	})
	names, _ := s.Value()
	return strings.Join(names, ",")
}

func hostCollection(g *krt.Graph, opts ...krt.Option) krt.Static[host] {
	hosts := krt.NewStatic[host](g, append([]krt.Option{krt.WithKey(hostKey)}, opts...)...)
	hosts.Set(
		host{Name: "a", Zone: "east", Tags: map[string]string{"role": "db"}, Wants: map[string]string{"role": "web"}},
		host{Name: "b", Zone: "west", Tags: map[string]string{"role": "web"}, Wants: map[string]string{"role": "db"}},
		host{Name: "c", Zone: "east", Tags: map[string]string{"role": "web"}},
	)
	return hosts
}

func ExampleWithName() {
	g := krt.NewGraph()
	krt.NewStatic[Pod](g, krt.WithName("pods"))
	krt.NewStatic[Service](g) // unnamed: the item type, then the kind
	for _, c := range g.Describe().Collections {
		fmt.Println(c.Name)
	}
	// Output:
	// pods
	// krt_test.Service/static
}

func ExampleWithKey() {
	g := krt.NewGraph()
	hosts := krt.NewStatic[host](g, krt.WithKey(hostKey))
	hosts.Set(host{Name: "a", Zone: "east"}, host{Name: "a", Zone: "west"})
	_, ok := hosts.Get("west/a")
	fmt.Println(hosts.Len(), ok)
	// Output: 2 true
}

func ExampleWithNamespace() {
	g := krt.NewGraph()
	hosts := hostCollection(g, krt.WithNamespace(func(h host) string { return h.Zone }))
	fmt.Println(hostNames(g, hosts, krt.FilterNamespace("east")))
	// Output: a,c
}

func ExampleWithLabels() {
	g := krt.NewGraph()
	hosts := hostCollection(g, krt.WithLabels(func(h host) map[string]string { return h.Tags }))
	// Ordered by key: east/c before west/b.
	fmt.Println(hostNames(g, hosts, krt.FilterLabels(map[string]string{"role": "web"})))
	// Output: c,b
}

func ExampleWithSelector() {
	g := krt.NewGraph()
	hosts := hostCollection(g, krt.WithSelector(func(h host) map[string]string { return h.Wants }))
	// The hosts that want to peer with a web host; c wants nothing, and an
	// empty selector selects nothing.
	fmt.Println(hostNames(g, hosts, krt.FilterSelects(map[string]string{"role": "web"})))
	// Output: a
}

func ExampleWithEquals() {
	g := krt.NewGraph()
	sameContent := func(x, y host) bool { return x.Name == y.Name && x.Zone == y.Zone }
	hosts := krt.NewStatic[host](g, krt.WithKey(hostKey), krt.WithEquals(sameContent))
	v1 := hosts.Set(host{Name: "a", Zone: "east", Revision: 1})
	// Equal by sameContent: no change, no event, no new version.
	v2 := hosts.Set(host{Name: "a", Zone: "east", Revision: 2})
	h, _ := hosts.Get("east/a")
	fmt.Println(v1, v2, h.Revision)
	// Output: 1 1 1
}

func ExampleWithUnsynced() {
	g := krt.NewGraph()
	pods := krt.NewStatic[Pod](g, krt.WithUnsynced())
	names := krt.NewCollection(g, pods, func(ctx krt.HandlerContext, p Pod) *Num { return &Num{Key: p.Name} })
	pods.Set(Pod{Name: "a", Namespace: "x"}) // part of the initial listing
	fmt.Println(pods.HasSynced(), names.HasSynced())
	pods.MarkSynced() // the listing is complete
	fmt.Println(pods.HasSynced(), names.HasSynced())
	// Output:
	// false false
	// true true
}

func ExampleWithLogger() {
	// Drop the time so the output is stable.
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	log := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: noTime}))
	g := krt.NewGraph(krt.WithLogger(log))
	in := krt.NewStatic[Num](g)
	krt.NewCollection(g, in, func(ctx krt.HandlerContext, n Num) *Num {
		if n.N < 0 {
			ctx.Fail(errors.New("negative"))
		}
		return &n
	}, krt.WithName("checked"))
	in.Set(Num{"a", -1})
	// Output: level=ERROR msg="collection error" collection=checked key=a error=negative
}

func ExampleWithErrorHistory() {
	g := krt.NewGraph(krt.WithErrorHistory(2))
	in := krt.NewStatic[Num](g)
	krt.NewCollection(g, in, func(ctx krt.HandlerContext, n Num) *Num {
		ctx.Fail(fmt.Errorf("attempt %d", n.N))
		return nil
	}, krt.WithName("failing"))
	for i := range 3 {
		in.Set(Num{"a", i + 1})
	}
	c := g.Describe().Collections[1]
	fmt.Println(c.Errors)
	for _, e := range c.RecentErrors { // only the last two are kept
		fmt.Println(e.Error)
	}
	// Output:
	// 3
	// attempt 2
	// attempt 3
}
