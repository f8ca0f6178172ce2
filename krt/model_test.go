package krt_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/krt/krttest"
)

// The model graph: static pods, services, mesh config and extra endpoints
// → workloads (one-to-one) → index by service → endpoints (one-to-one) →
// addresses (one-to-many, colliding keys) → join with extra endpoints →
// summary singleton. Every derived collection is compared with a
// from-scratch computation of the same function.

type MeshCfg struct{ TrustDomain string }

type Workload struct {
	Key, Namespace, IP string
	Services           []string
	Trust              string
}

func (w Workload) ResourceName() string { return w.Key }

type Address struct{ IP, Service string }

func (a Address) ResourceName() string { return a.IP }

type Summary struct{ Workloads, Addresses, Endpoints int }

type modelGraph struct {
	g         *krt.Graph
	pods      krt.Static[Pod]
	services  krt.Static[Service]
	mesh      krt.StaticSingleton[MeshCfg]
	extra     krt.Static[Endpoints]
	workloads krt.Collection[Workload]
	bySvc     krt.Index[Workload]
	endpoints krt.Collection[Endpoints]
	addresses krt.Collection[Address]
	joined    krt.Collection[Endpoints]
	summary   krt.Singleton[Summary]
}

func newModelGraph() *modelGraph { return newModelGraphIn(krt.NewGraph()) }

// modelModes are the ways the model runs: serially, and with every
// collection's dirty inputs computed in parallel however few they are.
var modelModes = []struct {
	name  string
	graph func() *krt.Graph
}{
	{"serial", func() *krt.Graph { return krt.NewGraph(krt.WithParallelism(1)) }},
	{"parallel", func() *krt.Graph {
		g := krt.NewGraph(krt.WithParallelism(4))
		krt.ForceParallel(g)
		return g
	}},
}

func newModelGraphIn(g *krt.Graph) *modelGraph {
	m := &modelGraph{g: g}
	m.pods = krt.NewStatic[Pod](m.g, krt.WithName("pods"))
	m.services = krt.NewStatic[Service](m.g, krt.WithName("services"))
	m.mesh = krt.NewStaticSingleton(m.g, &MeshCfg{TrustDomain: "cluster.local"}, krt.WithName("mesh"))
	m.extra = krt.NewStatic[Endpoints](m.g, krt.WithName("extra"))
	m.workloads = krt.NewCollection(m.g, m.pods, func(ctx krt.HandlerContext, p Pod) *Workload {
		svcs := krt.Fetch(ctx, m.services, krt.FilterNamespace(p.Namespace), krt.FilterSelects(p.Labels))
		mc, _ := krt.FetchOne(ctx, m.mesh)
		w := &Workload{Key: p.ResourceName(), Namespace: p.Namespace, IP: p.IP, Trust: mc.TrustDomain}
		for _, s := range svcs {
			w.Services = append(w.Services, s.ResourceName())
		}
		return w
	}, krt.WithName("workloads"))
	m.bySvc = krt.NewIndex(m.workloads, "by-service", func(w Workload) []string { return w.Services })
	m.endpoints = krt.NewCollection(m.g, m.services, func(ctx krt.HandlerContext, s Service) *Endpoints {
		ips := []string{}
		for w := range krt.FetchSeq(ctx, m.workloads, krt.FilterIndex(m.bySvc, s.ResourceName())) {
			ips = append(ips, w.IP)
		}
		sort.Strings(ips)
		return &Endpoints{Service: s.ResourceName(), IPs: ips}
	}, krt.WithName("endpoints"))
	m.addresses = krt.NewManyCollection(m.g, m.endpoints, func(ctx krt.HandlerContext, e Endpoints) []Address {
		var out []Address
		for _, ip := range e.IPs {
			out = append(out, Address{IP: ip, Service: e.Service})
		}
		return out
	}, krt.WithName("addresses"))
	m.joined = krt.Join(m.g, []krt.Collection[Endpoints]{m.extra, m.endpoints}, krt.WithName("joined"))
	m.summary = krt.NewSingleton(m.g, func(ctx krt.HandlerContext) *Summary {
		workloads := 0
		for range krt.FetchSeq(ctx, m.workloads) {
			workloads++
		}
		return &Summary{
			Workloads: workloads,
			Addresses: len(krt.Fetch(ctx, m.addresses)),
			Endpoints: len(krt.Fetch(ctx, m.joined)),
		}
	}, krt.WithName("summary"))
	return m
}

// oracle computes every derived collection from scratch.
type oracle struct {
	workloads map[string]Workload
	endpoints map[string]Endpoints
	addresses map[string]Address
	joined    map[string]Endpoints
	summary   Summary
}

func computeOracle(pods []Pod, services []Service, mesh MeshCfg, extra []Endpoints) oracle {
	o := oracle{workloads: map[string]Workload{}, endpoints: map[string]Endpoints{}, addresses: map[string]Address{}, joined: map[string]Endpoints{}}
	sort.Slice(services, func(i, j int) bool { return services[i].ResourceName() < services[j].ResourceName() })
	for _, p := range pods {
		w := Workload{Key: p.ResourceName(), Namespace: p.Namespace, IP: p.IP, Trust: mesh.TrustDomain}
		for _, s := range services {
			if s.Namespace == p.Namespace && len(s.Selector) > 0 && subset(s.Selector, p.Labels) {
				w.Services = append(w.Services, s.ResourceName())
			}
		}
		o.workloads[w.Key] = w
	}
	for _, s := range services {
		e := Endpoints{Service: s.ResourceName(), IPs: []string{}}
		for _, w := range o.workloads {
			if slices.Contains(w.Services, e.Service) {
				e.IPs = append(e.IPs, w.IP)
			}
		}
		sort.Strings(e.IPs)
		o.endpoints[e.Service] = e
		for _, ip := range e.IPs {
			if _, taken := o.addresses[ip]; !taken { // services iterate in key order: the smallest wins
				o.addresses[ip] = Address{IP: ip, Service: e.Service}
			}
		}
	}
	maps.Copy(o.joined, o.endpoints)
	for _, e := range extra {
		o.joined[e.Service] = e
	}
	o.summary = Summary{Workloads: len(o.workloads), Addresses: len(o.addresses), Endpoints: len(o.joined)}
	return o
}

func subset(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func asMap[T krt.ResourceNamer](items []T) map[string]T {
	m := map[string]T{}
	for _, v := range items {
		m[v.ResourceName()] = v
	}
	return m
}

// sameItems returns an error naming what when the items of v, by name,
// are not want.
func sameItems[T krt.ResourceNamer](what string, v krt.View[T], want map[string]T) error {
	if got := asMap(v.List()); !reflect.DeepEqual(got, want) {
		return fmt.Errorf("%s:\n got %v\nwant %v", what, got, want)
	}
	return nil
}

// check compares every derived collection with the oracle, inside one
// consistent read.
func (m *modelGraph) check() error {
	var err error
	m.g.Read(func(s *krt.Snapshot) {
		mesh, _ := m.mesh.At(s).Get(krt.SingletonKey)
		o := computeOracle(m.pods.At(s).List(), m.services.At(s).List(), mesh, m.extra.At(s).List())
		err = cmp.Or(sameItems("workloads", m.workloads.At(s), o.workloads), sameItems("endpoints", m.endpoints.At(s), o.endpoints),
			sameItems("addresses", m.addresses.At(s), o.addresses), sameItems("joined", m.joined.At(s), o.joined))
		if err != nil {
			return
		}
		if got, _ := m.summary.At(s).Get(krt.SingletonKey); got != o.summary {
			err = fmt.Errorf("summary: got %+v want %+v", got, o.summary)
			return
		}
		for key, e := range o.endpoints {
			var ips []string
			for _, w := range m.workloads.At(s).Lookup(m.bySvc, key) {
				ips = append(ips, w.IP)
			}
			sort.Strings(ips)
			if len(ips) == 0 {
				ips = []string{}
			}
			if !reflect.DeepEqual(ips, e.IPs) {
				err = fmt.Errorf("index lookup %s: got %v want %v", key, ips, e.IPs)
				return
			}
		}
	})
	return err
}

// op is one random input mutation, applied within tx.
type op func(tx *krt.Txn)

func randomOp(r *rand.Rand, m *modelGraph) (string, op) {
	ns := []string{"a", "b"}[r.IntN(2)]
	labels := func() map[string]string {
		l := map[string]string{}
		if r.IntN(4) > 0 {
			l["app"] = []string{"x", "y", "z"}[r.IntN(3)]
		}
		if r.IntN(2) == 0 {
			l["v"] = []string{"1", "2"}[r.IntN(2)]
		}
		return l
	}
	switch r.IntN(9) {
	case 0, 1, 2:
		p := Pod{Name: fmt.Sprintf("p%d", r.IntN(12)), Namespace: ns, Labels: labels(), IP: fmt.Sprintf("10.0.0.%d", r.IntN(8))}
		return "set pod " + p.ResourceName(), func(tx *krt.Txn) { m.pods.In(tx).Set(p) }
	case 3:
		k := fmt.Sprintf("%s/p%d", ns, r.IntN(12))
		return "delete pod " + k, func(tx *krt.Txn) { m.pods.In(tx).Delete(k) }
	case 4, 5:
		s := Service{Name: fmt.Sprintf("s%d", r.IntN(5)), Namespace: ns, Selector: labels()}
		return "set service " + s.ResourceName(), func(tx *krt.Txn) { m.services.In(tx).Set(s) }
	case 6:
		k := fmt.Sprintf("%s/s%d", ns, r.IntN(5))
		return "delete service " + k, func(tx *krt.Txn) { m.services.In(tx).Delete(k) }
	case 7:
		td := []string{"cluster.local", "example.org"}[r.IntN(2)]
		return "mesh " + td, func(tx *krt.Txn) { m.mesh.In(tx).Set(MeshCfg{TrustDomain: td}) }
	default:
		k := fmt.Sprintf("%s/s%d", ns, r.IntN(5))
		if r.IntN(2) == 0 {
			return "delete extra " + k, func(tx *krt.Txn) { m.extra.In(tx).Delete(k) }
		}
		e := Endpoints{Service: k, IPs: []string{"192.168.0.1"}}
		return "set extra " + k, func(tx *krt.Txn) { m.extra.In(tx).Set(e) }
	}
}

// runModel applies steps random transactions (single ops and batches) and
// checks the graph against the oracle after each.
func runModel(t testing.TB, g *krt.Graph, seed uint64, steps int) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	m := newModelGraphIn(g)
	if err := m.check(); err != nil {
		t.Fatalf("seed %d: initial: %v", seed, err)
	}
	var history []string
	for i := range steps {
		n := 1
		if r.IntN(3) == 0 {
			n = 2 + r.IntN(4)
		}
		var ops []op
		for range n {
			desc, o := randomOp(r, m)
			history = append(history, fmt.Sprintf("%d: %s", i, desc))
			ops = append(ops, o)
		}
		m.g.Update(func(tx *krt.Txn) {
			for _, o := range ops {
				o(tx)
			}
		})
		if err := m.check(); err != nil {
			t.Fatalf("seed %d step %d: %v\nhistory (last 10):\n%v", seed, i, err, history[max(0, len(history)-10):])
		}
	}
}

func TestModelRandomized(t *testing.T) {
	steps := 400
	if testing.Short() {
		steps = 100
	}
	for _, mode := range modelModes {
		for seed := uint64(1); seed <= 20; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", mode.name, seed), func(t *testing.T) {
				g := mode.graph()
				runModel(t, g, seed, steps)
				if runs := krt.ParallelRuns(g); (mode.name == "parallel") != (runs > 0) {
					t.Errorf("%s mode computed in parallel %d times", mode.name, runs)
				}
			})
		}
	}
}

func FuzzModel(f *testing.F) {
	for _, s := range []uint64{1, 2, 42, 1234} {
		f.Add(s, uint16(50))
	}
	f.Fuzz(func(t *testing.T, seed uint64, steps uint16) {
		for _, mode := range modelModes {
			runModel(t, mode.graph(), seed, int(steps%300))
		}
	})
}

// TestModelHandlersAndConsistentReads runs writers while readers check,
// inside Graph.Read, that endpoints agree with workloads, and handlers
// rebuild each collection from events, delivered on their own goroutine
// and inline.
func TestModelHandlersAndConsistentReads(t *testing.T) {
	for _, d := range []struct {
		name string
		opts []krt.RegisterOption
	}{{"goroutine", nil}, {"inline", []krt.RegisterOption{krt.Inline()}}} {
		t.Run(d.name, func(t *testing.T) { modelHandlersAndReads(t, d.opts...) })
	}
}

func modelHandlersAndReads(t *testing.T, opts ...krt.RegisterOption) {
	m := newModelGraph()
	var mu sync.Mutex
	seen := map[string]Endpoints{}
	var lastVersion uint64
	reg := m.endpoints.Register(func(b krt.Batch[Endpoints]) {
		mu.Lock()
		defer mu.Unlock()
		if b.Version < lastVersion {
			t.Errorf("batch version %d after %d", b.Version, lastVersion)
		}
		lastVersion = b.Version
		for _, e := range b.Events {
			if e.Type == krt.EventDelete {
				delete(seen, e.Key)
			} else {
				seen[e.Key] = *e.New
			}
		}
	}, append(opts, krt.WithReplay())...)
	defer reg.Unregister()

	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error)
	go func() { runDone <- m.g.Run(ctx) }()

	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			checkReadsUntil(t, m, stop)
		}()
	}
	r := rand.New(rand.NewPCG(7, 7))
	for range 300 {
		_, o := randomOp(r, m)
		m.g.Update(o)
	}
	close(stop)
	readers.Wait()
	// Every batch up to the final version is queued; wait for delivery.
	want := asMap(m.endpoints.List())
	deadline := time.Now().Add(krttest.Timeout)
	for {
		mu.Lock()
		got := maps.Clone(seen)
		mu.Unlock()
		if reflect.DeepEqual(got, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("handler state differs from collection:\n got %v\nwant %v", got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-runDone
}

// checkReadsUntil checks, inside Graph.Read and until stop closes, that
// every workload's IP is in the endpoints of each of its services.
func checkReadsUntil(t *testing.T, m *modelGraph, stop <-chan struct{}) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		if i%4 == 0 {
			// A whole check against the oracle takes a while: commits land
			// under the snapshot it holds, which must not see them.
			if err := m.check(); err != nil {
				t.Errorf("snapshot read while writing: %v", err)
			}
			continue
		}
		m.g.Read(func(snap *krt.Snapshot) {
			for _, w := range m.workloads.At(snap).List() {
				for _, s := range w.Services {
					e, ok := m.endpoints.At(snap).Get(s)
					if !ok || !slices.Contains(e.IPs, w.IP) {
						t.Errorf("inconsistent read: workload %s (ip %s) of %s missing from endpoints %v", w.Key, w.IP, s, e.IPs)
					}
				}
			}
		})
	}
}
