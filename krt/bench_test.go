package krt_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"testing"

	"github.com/meshd/meshd/krt"
)

// Benchmarks come in size ladders (n = 10 … 10000). Each reports allocations
// and, where an operation is a unit of work a user would count, a rate via
// ReportMetric. The whole-system comparison with Istio's krt lives in
// bench/krt; these isolate one mechanism each.

var benchSizes = []int{10, 100, 1000, 10000}

// benchItem is a namespaced, labelled, selecting item: all the accessors
// the filters use.
type benchItem struct {
	Name, Namespace string
	Labels          map[string]string
	Selector        map[string]string
	Value           int
}

func (i benchItem) ResourceName() string           { return i.Namespace + "/" + i.Name }
func (i benchItem) GetNamespace() string           { return i.Namespace }
func (i benchItem) GetLabels() map[string]string   { return i.Labels }
func (i benchItem) GetSelector() map[string]string { return i.Selector }
func (i benchItem) Equals(o benchItem) bool {
	return i.Name == o.Name && i.Namespace == o.Namespace && i.Value == o.Value &&
		maps.Equal(i.Labels, o.Labels) && maps.Equal(i.Selector, o.Selector)
}

// benchItems returns n items in 10 namespaces, in groups of 10 sharing the
// label and selector group=g.
func benchItems(n int) []benchItem {
	out := make([]benchItem, n)
	for i := range out {
		g := "g" + strconv.Itoa(i/10)
		out[i] = benchItem{
			Name: "item-" + strconv.Itoa(i), Namespace: "ns-" + strconv.Itoa(i%10),
			Labels: map[string]string{"group": g}, Selector: map[string]string{"group": g}, Value: i,
		}
	}
	return out
}

type benchCount struct {
	Key string
	N   int
}

func (c benchCount) ResourceName() string { return c.Key }

// BenchmarkFetch measures one recomputation whose transformation fetches
// from a collection of n items, per filter kind: the whole collection, one
// key, a namespace (n/10 items), the items whose labels match a selector and
// the items whose selector selects a label set (10 items each).
func BenchmarkFetch(b *testing.B) {
	filters := []struct {
		name   string
		filter func(n int) krt.Filter
	}{
		{"all", nil},
		{"key", func(n int) krt.Filter { return krt.FilterKey("ns-0/item-0") }},
		{"namespace", func(n int) krt.Filter { return krt.FilterNamespace("ns-1") }},
		{"labels", func(n int) krt.Filter { return krt.FilterLabels(map[string]string{"group": "g0"}) }},
		{"selects", func(n int) krt.Filter { return krt.FilterSelects(map[string]string{"group": "g0"}) }},
	}
	for _, f := range filters {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("%s/n=%d", f.name, n), func(b *testing.B) {
				g, items := newStatic[benchItem]()
				items.Set(benchItems(n)...)
				trigger := krt.NewStatic[benchCount](g)
				trigger.Set(benchCount{Key: "t"})
				var fs []krt.Filter
				if f.filter != nil {
					fs = append(fs, f.filter(n))
				}
				fetched := 0
				krt.NewCollection(g, trigger, func(ctx krt.HandlerContext, t benchCount) *benchCount {
					fetched = len(krt.Fetch(ctx, items, fs...))
					return &benchCount{Key: t.Key, N: t.N}
				})
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					i++
					trigger.Set(benchCount{Key: "t", N: i})
				}
				if fetched == 0 {
					b.Fatal("the fetch returned nothing")
				}
				b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "fetches/s")
			})
		}
	}
}

// BenchmarkStaticSet measures writing to a static collection holding n
// items: one changed item per transaction, all n items rewritten in one
// transaction, and n items loaded into an empty collection in one, as a
// build fills its inputs.
func BenchmarkStaticSet(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("load/n=%d", n), func(b *testing.B) {
			items := benchItems(n)
			b.ReportAllocs()
			for b.Loop() {
				_, s := newStatic[benchItem]()
				s.Set(items...)
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "items/s")
		})
	}
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("one/n=%d", n), func(b *testing.B) {
			_, s := newStatic[benchItem]()
			items := benchItems(n)
			s.Set(items...)
			benchSetOne(b, s, items, "events/s")
		})
	}
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("batch/n=%d", n), func(b *testing.B) {
			_, s := newStatic[benchItem]()
			items := benchItems(n)
			b.ReportAllocs()
			rounds := 0
			for b.Loop() {
				rounds++
				for j := range items {
					items[j].Value = rounds
				}
				s.Set(items...)
			}
			b.ReportMetric(float64(rounds*n)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// benchSetOne changes one of items in s per transaction, in turn, and
// reports the rate of changes as unit.
func benchSetOne(b *testing.B, s krt.Static[benchItem], items []benchItem, unit string) {
	n := len(items)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		it := items[i%n]
		it.Value = n + i
		s.Set(it)
		i++
	}
	b.ReportMetric(float64(i)/b.Elapsed().Seconds(), unit)
}

// BenchmarkDerivedRecompute measures a derived collection of n outputs:
// one input changed (one recomputation), and a singleton every output
// reads changed (n recomputations in one transaction).
func BenchmarkDerivedRecompute(b *testing.B) {
	type out struct {
		Key    string
		Value  int
		Domain string
	}
	setup := func(n int, opts ...krt.GraphOption) (krt.Static[benchItem], krt.StaticSingleton[string], []benchItem) {
		g := krt.NewGraph(opts...)
		in := krt.NewStatic[benchItem](g)
		items := benchItems(n)
		in.Set(items...)
		cfg := krt.NewStaticSingleton(g, ptr("d0"))
		krt.NewCollection(g, in, func(ctx krt.HandlerContext, it benchItem) *out {
			d, _ := krt.FetchOne(ctx, cfg)
			return &out{Key: it.ResourceName(), Value: it.Value, Domain: d}
		}, krt.WithKey(func(o out) string { return o.Key }), krt.WithEquals(func(a, b out) bool { return a == b }))
		return in, cfg, items
	}
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("one/n=%d", n), func(b *testing.B) {
			in, _, items := setup(n)
			benchSetOne(b, in, items, "recomputes/s")
		})
	}
	// fanout runs serially and with two goroutines (see WithParallelism).
	for _, par := range []int{1, 2} {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("fanout/parallelism=%d/n=%d", par, n), func(b *testing.B) {
				_, cfg, _ := setup(n, krt.WithParallelism(par))
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					i++
					cfg.Set("d" + strconv.Itoa(i))
				}
				b.ReportMetric(float64(i*n)/b.Elapsed().Seconds(), "recomputes/s")
			})
		}
	}
}

// BenchmarkIndexLookup measures Index.Lookup of a key filing 10 of n items.
func BenchmarkIndexLookup(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			_, s := newStatic[benchItem]()
			s.Set(benchItems(n)...)
			idx := krt.NewIndex(s, "by-group", func(it benchItem) []string { return []string{it.Labels["group"]} })
			groups := max(1, n/10)
			keys := make([]string, groups)
			for i := range keys {
				keys[i] = "g" + strconv.Itoa(i)
			}
			b.ReportAllocs()
			i, found := 0, 0
			for b.Loop() {
				found += len(idx.Lookup(keys[i%groups]))
				i++
			}
			if found == 0 {
				b.Fatal("lookups found nothing")
			}
			b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "lookups/s")
		})
	}
}

// The 3-level graph: pods -> workloads (each reads the services selecting
// its pod) -> endpoints (per service, through an index of workloads by
// service), as in bench/krt.

type benchPod struct {
	Name, Namespace, IP string
	Labels              map[string]string
}

func (p benchPod) ResourceName() string         { return p.Namespace + "/" + p.Name }
func (p benchPod) GetNamespace() string         { return p.Namespace }
func (p benchPod) GetLabels() map[string]string { return p.Labels }
func (p benchPod) Equals(o benchPod) bool {
	return p.Name == o.Name && p.Namespace == o.Namespace && p.IP == o.IP && maps.Equal(p.Labels, o.Labels)
}

type benchService struct {
	Name, Namespace string
	Selector        map[string]string
}

func (s benchService) ResourceName() string           { return s.Namespace + "/" + s.Name }
func (s benchService) GetNamespace() string           { return s.Namespace }
func (s benchService) GetSelector() map[string]string { return s.Selector }
func (s benchService) Equals(o benchService) bool {
	return s.Name == o.Name && s.Namespace == o.Namespace && maps.Equal(s.Selector, o.Selector)
}

type benchWorkload struct {
	Key, IP  string
	Services []string
}

func (w benchWorkload) ResourceName() string { return w.Key }
func (w benchWorkload) Equals(o benchWorkload) bool {
	return w.Key == o.Key && w.IP == o.IP && slices.Equal(w.Services, o.Services)
}

type benchEndpoints struct {
	Service string
	IPs     []string
}

func (e benchEndpoints) ResourceName() string { return e.Service }
func (e benchEndpoints) Equals(o benchEndpoints) bool {
	return e.Service == o.Service && slices.Equal(e.IPs, o.IPs)
}

// benchMesh builds the 3-level graph with n pods, 10 per service.
func benchMesh(n int) (*krt.Graph, krt.Static[benchPod], krt.Collection[benchEndpoints], []benchPod) {
	g, svcs := newStatic[benchService]()
	pods := krt.NewStatic[benchPod](g)
	nsvc := max(1, n/10)
	for i := range nsvc {
		name := "svc-" + strconv.Itoa(i)
		svcs.Set(benchService{Name: name, Namespace: "ns-" + strconv.Itoa(i%10), Selector: map[string]string{"app": name}})
	}
	ps := make([]benchPod, n)
	for j := range ps {
		s := j % nsvc
		ps[j] = benchPod{Name: "pod-" + strconv.Itoa(j), Namespace: "ns-" + strconv.Itoa(s%10),
			Labels: map[string]string{"app": "svc-" + strconv.Itoa(s)}, IP: "10.0." + strconv.Itoa(j/256) + "." + strconv.Itoa(j%256)}
	}
	pods.Set(ps...)
	workloads := krt.NewCollection(g, pods, func(ctx krt.HandlerContext, p benchPod) *benchWorkload {
		selected := krt.Fetch(ctx, svcs, krt.FilterNamespace(p.Namespace), krt.FilterSelects(p.Labels))
		names := make([]string, len(selected))
		for i, s := range selected {
			names[i] = s.ResourceName()
		}
		return &benchWorkload{Key: p.ResourceName(), IP: p.IP, Services: names}
	})
	bySvc := krt.NewIndex(workloads, "by-service", func(w benchWorkload) []string { return w.Services })
	endpoints := krt.NewCollection(g, svcs, func(ctx krt.HandlerContext, s benchService) *benchEndpoints {
		wls := krt.Fetch(ctx, workloads, krt.FilterIndex(bySvc, s.ResourceName()))
		ips := make([]string, len(wls))
		for i, w := range wls {
			ips[i] = w.IP
		}
		sort.Strings(ips)
		return &benchEndpoints{Service: s.ResourceName(), IPs: ips}
	})
	return g, pods, endpoints, ps
}

// benchMovePods gives one of ps, in turn, a new IP per transaction, and
// runs after, when not nil, after each; it returns how many it moved.
func benchMovePods(b *testing.B, pods krt.Static[benchPod], ps []benchPod, after func()) int {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p := ps[i%len(ps)]
		p.IP = "11." + strconv.Itoa(i)
		pods.Set(p)
		if after != nil {
			after()
		}
		i++
	}
	return i
}

// BenchmarkPropagate measures one pod IP change travelling through the
// 3-level graph of n pods: until the write returns (commit), and until a
// registered endpoints handler has received the event (handler).
func BenchmarkPropagate(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("commit/n=%d", n), func(b *testing.B) {
			_, pods, endpoints, ps := benchMesh(n)
			i := benchMovePods(b, pods, ps, nil)
			if got := endpoints.Len(); got != max(1, n/10) {
				b.Fatalf("%d endpoints, want %d", got, max(1, n/10))
			}
			b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "events/s")
		})
	}
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("handler/n=%d", n), func(b *testing.B) {
			g, pods, endpoints, ps := benchMesh(n)
			got := make(chan struct{}, 1)
			endpoints.Register(func(krt.Batch[benchEndpoints]) { got <- struct{}{} })
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- g.Run(ctx) }()
			i := benchMovePods(b, pods, ps, func() { <-got })
			b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "events/s")
			cancel()
			<-done
		})
	}
}

func ptr[T any](v T) *T { return &v }
