package krt_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/krt/krttest"
)

// filterFixture is a graph of four pods and three services to filter.
func filterFixture() (*krt.Graph, krt.Static[Pod], krt.Static[Service]) {
	g, pods := newStatic[Pod]()
	svcs := krt.NewStatic[Service](g)
	pods.Set(
		Pod{Name: "a", Namespace: "x", Labels: map[string]string{"app": "web", "v": "1"}},
		Pod{Name: "b", Namespace: "x", Labels: map[string]string{"app": "web", "v": "2"}},
		Pod{Name: "c", Namespace: "y", Labels: map[string]string{"app": "web"}},
		Pod{Name: "d", Namespace: "y", Labels: map[string]string{"app": "db"}},
	)
	svcs.Set(
		Service{Name: "web", Namespace: "x", Selector: map[string]string{"app": "web"}},
		Service{Name: "web-v1", Namespace: "x", Selector: map[string]string{"app": "web", "v": "1"}},
		Service{Name: "none", Namespace: "x"},
	)
	return g, pods, svcs
}

func TestFetchFilters(t *testing.T) {
	g, pods, _ := filterFixture()
	byApp := krt.NewIndex(pods, "app", func(p Pod) []string { return []string{p.Labels["app"]} })

	podCases := []struct {
		name    string
		filters []krt.Filter
		want    []string
	}{
		{"all", nil, []string{"x/a", "x/b", "y/c", "y/d"}},
		{"key", []krt.Filter{krt.FilterKey("y/c")}, []string{"y/c"}},
		{"missing key", []krt.Filter{krt.FilterKey("nope")}, nil},
		{"keys", []krt.Filter{krt.FilterKeys("y/d", "x/a")}, []string{"x/a", "y/d"}},
		{"namespace", []krt.Filter{krt.FilterNamespace("y")}, []string{"y/c", "y/d"}},
		{"labels", []krt.Filter{krt.FilterLabels(map[string]string{"app": "web"})}, []string{"x/a", "x/b", "y/c"}},
		{"labels+ns", []krt.Filter{krt.FilterLabels(map[string]string{"app": "web"}), krt.FilterNamespace("x")}, []string{"x/a", "x/b"}},
		// As a Kubernetes Service with no selector selects no pods.
		{"nil selector selects nothing", []krt.Filter{krt.FilterLabels(nil), krt.FilterNamespace("y")}, nil},
		{"empty selector selects nothing", []krt.Filter{krt.FilterLabels(map[string]string{})}, nil},
		{"index", []krt.Filter{krt.FilterIndex(byApp, "db")}, []string{"y/d"}},
		{"predicate", []krt.Filter{krt.FilterFunc(func(p Pod) bool { return p.Name > "b" })}, []string{"y/c", "y/d"}},
		{"index+predicate", []krt.Filter{krt.FilterIndex(byApp, "web"), krt.FilterFunc(func(p Pod) bool { return p.Namespace == "x" })}, []string{"x/a", "x/b"}},
	}
	for _, tc := range podCases {
		t.Run("pods/"+tc.name, func(t *testing.T) {
			got := fetchKeys(g, pods, tc.filters)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %v want %v", got, tc.want)
			}
		})
	}
}

func TestFetchFilterSelects(t *testing.T) {
	g, _, svcs := filterFixture()
	svcCases := []struct {
		name   string
		labels map[string]string
		want   []string
	}{
		{"selects v1 pod", map[string]string{"app": "web", "v": "1"}, []string{"x/web", "x/web-v1"}},
		{"selects v2 pod", map[string]string{"app": "web", "v": "2"}, []string{"x/web"}},
		{"selects nothing", map[string]string{"app": "db"}, nil},
		{"empty labels", nil, nil},
	}
	for _, tc := range svcCases {
		t.Run("services/"+tc.name, func(t *testing.T) {
			got := fetchKeys(g, svcs, []krt.Filter{krt.FilterSelects(tc.labels)})
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %v want %v", got, tc.want)
			}
		})
	}
}

// fetchKeys runs one Fetch through a singleton and returns the keys.
func fetchKeys[T krt.ResourceNamer](g *krt.Graph, c krt.Collection[T], filters []krt.Filter) []string {
	type keys struct{ K []string }
	s := krt.NewSingleton(g, func(ctx krt.HandlerContext) *keys {
		out := &keys{}
		for _, v := range krt.Fetch(ctx, c, filters...) {
			out.K = append(out.K, v.ResourceName())
		}
		return out
	})
	v, _ := s.Value()
	return v.K
}

// TestSelectorDependenciesAreIndexed checks that a change recomputes only
// the inputs whose recorded filter it can affect.
func TestSelectorDependenciesAreIndexed(t *testing.T) {
	g, pods := newStatic[Pod]()
	svcs := krt.NewStatic[Service](g)
	for i := range 50 {
		app := string(rune('a' + i%5))
		svcs.Set(Service{Name: "s" + app + string(rune('0'+i/5)), Namespace: "ns", Selector: map[string]string{"app": app}})
	}
	for i := range 100 {
		app := string(rune('a' + i%5))
		pods.Set(Pod{Name: "p" + string(rune('0'+i/10)) + string(rune('0'+i%10)), Namespace: "ns", Labels: map[string]string{"app": app}})
	}
	// Transformations may run in parallel: count under a lock.
	var mu sync.Mutex
	recomputed := map[string]int{}
	count := func(name string) {
		mu.Lock()
		defer mu.Unlock()
		recomputed[name]++
	}
	krt.NewCollection(g, pods, func(ctx krt.HandlerContext, p Pod) *Pod {
		count(p.Name)
		krt.Fetch(ctx, svcs, krt.FilterNamespace("ns"), krt.FilterSelects(p.Labels))
		return &p
	}, krt.WithName("by-selects"))
	krt.NewCollection(g, svcs, func(ctx krt.HandlerContext, s Service) *Service {
		count(s.Name)
		krt.Fetch(ctx, pods, krt.FilterNamespace("ns"), krt.FilterLabels(s.Selector))
		return &s
	}, krt.WithName("by-labels"))
	clear(recomputed)

	// A new service selecting app=a: only the 20 app=a pods recompute.
	svcs.Set(Service{Name: "new", Namespace: "ns", Selector: map[string]string{"app": "a"}})
	pods0 := 0
	for k, n := range recomputed {
		if k[0] == 'p' {
			pods0 += n
		}
	}
	if pods0 != 20 {
		t.Fatalf("service add recomputed %d pods, want 20", pods0)
	}
	clear(recomputed)
	// A pod moving from app=a to app=b: only the services selecting a or b.
	pods.Set(Pod{Name: "p00", Namespace: "ns", Labels: map[string]string{"app": "b"}})
	svcN := 0
	for k, n := range recomputed {
		if k[0] == 's' || k == "new" {
			svcN += n
		}
	}
	if svcN != 21 { // 10 of app=a, 10 of app=b, plus "new"
		t.Fatalf("pod relabel recomputed %d services, want 21", svcN)
	}
}

func TestEarlyCutoffStopsPropagation(t *testing.T) {
	g, in := newStatic[Num]()
	parity := krt.NewCollection(g, in, func(ctx krt.HandlerContext, n Num) *Num {
		return &Num{Key: n.Key, N: n.N % 2}
	})
	downstream := 0
	krt.NewCollection(g, parity, func(ctx krt.HandlerContext, n Num) *Num {
		downstream++
		return &n
	})
	in.Set(Num{"a", 1})
	before := downstream
	in.Set(Num{"a", 3}) // same parity: no change, no downstream recompute
	if downstream != before {
		t.Fatalf("downstream recomputed %d times after an equal output", downstream-before)
	}
	v := g.Version()
	in.Set(Num{"a", 3}) // identical input: no transaction at all
	if g.Version() != v {
		t.Fatal("no-op write created a version")
	}
}

// TestNoGlitchInDiamond: a handler on the join of two paths from one
// input never sees the two paths disagree.
func TestNoGlitchInDiamond(t *testing.T) {
	g, in := newStatic[Num]()
	left := krt.NewCollection(g, in, func(ctx krt.HandlerContext, n Num) *Num { return &Num{Key: n.Key, N: n.N} })
	right := krt.NewCollection(g, in, func(ctx krt.HandlerContext, n Num) *Num { return &Num{Key: n.Key, N: -n.N} })
	sum := krt.NewSingleton(g, func(ctx krt.HandlerContext) *Num {
		total := 0
		for _, n := range krt.Fetch(ctx, left) {
			total += n.N
		}
		for _, n := range krt.Fetch(ctx, right) {
			total += n.N
		}
		return &Num{Key: "sum", N: total}
	})
	bad := make(chan int, 100)
	reg := sum.Register(func(b krt.Batch[Num]) {
		for _, e := range b.Events {
			if e.New != nil && e.New.N != 0 {
				bad <- e.New.N
			}
		}
	})
	defer reg.Unregister()
	stop := runGraph(t, g)
	for i := range 100 {
		in.Set(Num{"a", i}, Num{"b", 2 * i})
	}
	stop()
	select {
	case n := <-bad:
		t.Fatalf("handler saw an intermediate sum %d", n)
	default:
	}
	if v, _ := sum.Value(); v.N != 0 {
		t.Fatalf("sum = %d", v.N)
	}
}

func TestJoinVariants(t *testing.T) {
	g := krt.NewGraph()
	krttest.Run(t, g)
	a := krt.NewStatic[Num](g)
	b := krt.NewStatic[Num](g)
	first := krt.Join(g, []krt.Collection[Num]{a, b})
	merged := krt.JoinMerge(g, []krt.Collection[Num]{a, b}, func(items []Num) Num {
		out := Num{Key: items[0].Key}
		for _, n := range items {
			out.N += n.N
		}
		return out
	})
	firstEvents := krttest.Track(t, g, first)
	a.Set(Num{"x", 1})
	b.Set(Num{"x", 10}, Num{"y", 20})
	krttest.ExpectList(t, first, Num{"x", 1}, Num{"y", 20})
	krttest.ExpectList(t, merged, Num{"x", 11}, Num{"y", 20})
	firstEvents.Expect("add x", "add y") // b's x is shadowed by a's: no event
	a.Delete("x")
	krttest.ExpectList(t, first, Num{"x", 10}, Num{"y", 20})
	krttest.ExpectList(t, merged, Num{"x", 10}, Num{"y", 20})
	firstEvents.Expect("update x")
}

func TestStaticOperations(t *testing.T) {
	g := krt.NewGraph()
	s := krttest.NewStatic(g, []Num{{"a", 1}, {"b", 2}})
	s.Modify("a", func(old Num, ok bool) (Num, bool) { return Num{"a", old.N + 10}, ok })
	s.Modify("zz", func(old Num, ok bool) (Num, bool) { return Num{"zz", 1}, ok }) // absent: not written
	krttest.ExpectList(t, s, Num{"a", 11}, Num{"b", 2})
	s.Reset([]Num{{"b", 2}, {"c", 3}})
	krttest.ExpectKeys(t, s, "b", "c")
	ss := krt.NewStaticSingleton[Num](g, nil)
	if _, ok := ss.Value(); ok {
		t.Fatal("empty singleton has a value")
	}
	ss.Set(Num{"cfg", 1})
	krttest.ExpectList(t, ss, Num{"cfg", 1})
	if v, ok := ss.Value(); !ok || v.N != 1 {
		t.Fatalf("singleton %v %v", v, ok)
	}
	ss.Clear()
	krttest.ExpectKeys(t, ss)
}

func TestDescribeReportsEdges(t *testing.T) {
	m := newModelGraph()
	m.pods.Set(Pod{Name: "p", Namespace: "a", Labels: map[string]string{"app": "x"}, IP: "10.0.0.1"})
	m.services.Set(Service{Name: "s", Namespace: "a", Selector: map[string]string{"app": "x"}})
	info := m.g.Describe()
	ids := map[string]int{}
	for _, c := range info.Collections {
		ids[c.Name] = c.ID
	}
	has := func(from, to, kind string) bool {
		for _, e := range info.Edges {
			if e.From == ids[from] && e.To == ids[to] && e.Kind == kind {
				return true
			}
		}
		return false
	}
	for _, want := range [][3]string{
		{"pods", "workloads", "primary"},
		{"services", "workloads", "fetch"},
		{"mesh", "workloads", "fetch"},
		{"workloads", "endpoints", "index"},
		{"endpoints", "addresses", "primary"},
		{"extra", "joined", "join"},
		{"endpoints", "joined", "join"},
		{"addresses", "summary", "fetch"},
	} {
		if !has(want[0], want[1], want[2]) {
			t.Errorf("missing edge %v in %+v", want, info.Edges)
		}
	}
	exp, err := m.g.Explain("workloads", "a/p")
	if err != nil || exp.Input != "a/p" || exp.InputFrom != "pods" || len(exp.Reads) != 2 {
		t.Fatalf("explain: %+v %v", exp, err)
	}
	items, total, err := m.g.Items("pods", "a/", 0, 10)
	if err != nil || total != 1 || items[0].Key != "a/p" {
		t.Fatalf("items: %v %d %v", items, total, err)
	}
}

func TestFilterOnMissingAccessorFails(t *testing.T) {
	g, hosts := newStatic[host](krt.WithKey(hostKey), krt.WithName("hosts"))
	hosts.Set(host{Name: "a", Zone: "east", Tags: map[string]string{"role": "db"}})
	cases := []struct {
		filter krt.Filter
		names  string // what the error must name
	}{
		{krt.FilterLabels(map[string]string{"role": "db"}), "WithLabels"},
		{krt.FilterSelects(map[string]string{"role": "db"}), "WithSelector"},
		{krt.FilterNamespace("east"), "WithNamespace"},
	}
	for i, tc := range cases {
		t.Run(tc.names, func(t *testing.T) {
			name := fmt.Sprintf("fetches-%d", i)
			out := krt.NewSingleton(g, func(ctx krt.HandlerContext) *Num {
				return &Num{Key: "n", N: len(krt.Fetch(ctx, hosts, tc.filter))}
			}, krt.WithName(name))
			if _, ok := out.Value(); ok {
				t.Fatal("a fetch that cannot match produced an output")
			}
			ci := info(t, g, name)
			if ci.FailingInputs != 1 || len(ci.RecentErrors) != 1 {
				t.Fatalf("failing=%d errors=%+v", ci.FailingInputs, ci.RecentErrors)
			}
			if msg := ci.RecentErrors[0].Error; !strings.Contains(msg, tc.names) || !strings.Contains(msg, `"hosts"`) {
				t.Fatalf("error %q does not name %s and the collection", msg, tc.names)
			}
		})
	}
}

func TestEmptySelectorDependsOnNothing(t *testing.T) {
	g, pods, svcs := filterFixture()
	var recomputes int
	counts := krt.NewCollection(g, svcs, func(ctx krt.HandlerContext, s Service) *Num {
		recomputes++
		return &Num{Key: s.ResourceName(), N: len(krt.Fetch(ctx, pods, krt.FilterLabels(s.Selector)))}
	})
	before := recomputes
	pods.Set(Pod{Name: "e", Namespace: "x", Labels: map[string]string{"app": "other"}})
	if n, _ := counts.Get("x/none"); n.N != 0 {
		t.Fatalf("a service with no selector selects %d pods", n.N)
	}
	if recomputes != before {
		t.Fatalf("a pod no selector matches recomputed %d services", recomputes-before)
	}
}

// TestFetchOne reads, through each access path, the item with the
// smallest key among those passing the filters, as Fetch lists first; and
// none when nothing passes.
func TestFetchOne(t *testing.T) {
	g, nums := newStatic[Num]()
	nums.Set(Num{Key: "c", N: 3}, Num{Key: "a", N: 1}, Num{Key: "d", N: 4}, Num{Key: "b", N: 2})
	byParity := krt.NewIndex(nums, "parity", func(n Num) []string { return []string{strconv.Itoa(n.N % 2)} })
	odd := func(n Num) bool { return n.N%2 == 1 }
	cases := []struct {
		name    string
		filters []krt.Filter
		want    string // "" for none
	}{
		{"no filter", nil, "a"},
		{"keys", []krt.Filter{krt.FilterKeys("d", "c", "d")}, "c"},
		{"index", []krt.Filter{krt.FilterIndex(byParity, "0")}, "b"},
		{"predicate", []krt.Filter{krt.FilterFunc(func(n Num) bool { return !odd(n) })}, "b"},
		{"keys and predicate", []krt.Filter{krt.FilterKeys("d", "c", "a"), krt.FilterFunc(odd)}, "a"},
		{"nothing passes", []krt.Filter{krt.FilterKeys("x")}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var first []Num
			got := krt.NewSingleton(g, func(ctx krt.HandlerContext) *Num {
				first = krt.Fetch(ctx, nums, tc.filters...)
				n, ok := krt.FetchOne(ctx, nums, tc.filters...)
				if !ok {
					return nil
				}
				return &n
			})
			n, ok := got.Value()
			if tc.want == "" {
				if ok || len(first) != 0 {
					t.Fatalf("FetchOne = %v, %v and Fetch %v; want none", n, ok, first)
				}
				return
			}
			if !ok || n.Key != tc.want || first[0].Key != tc.want {
				t.Fatalf("FetchOne = %v, %v; Fetch lists %v first; want %q", n, ok, first, tc.want)
			}
		})
	}
}
