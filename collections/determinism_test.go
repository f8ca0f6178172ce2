package collections

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
	"github.com/meshd/meshd/sources/meshconfig"
)

// Replicas of meshd watch the same API server, but their informers deliver
// the objects in different orders, batches and intermediate revisions. The
// xDS server versions a resource by a hash of its deterministic bytes, so
// replicas agree on versions (and a proxy moving between them is spared a
// push) only if the model's output is a function of the final input alone.
// TestModelDeterministic checks that property: every random history ending
// in the same inputs yields byte-identical xDS resources, with the same
// visibility, and the same route status and model items.

// detStep is one write of a history.
type detStep struct {
	desc  string
	apply func(tx *krt.Txn, in sources.StaticInputs)
}

// detChain is the history of one object: its steps keep their order when
// chains are interleaved.
type detChain []detStep

// detObject is a Kubernetes object of the universe.
type detObject[T any] interface {
	metav1.Object
	DeepCopy() T
}

// detKind is one input collection of the universe.
type detKind[T detObject[T]] struct {
	name   string
	finals []T
	extras []T
	vary   func(*rand.Rand, T) T
}

// chains returns a random history per object: finals end set to their
// final content, extras end deleted; and maybe a relist, which resets the
// collection to the final objects at a random point.
func (k detKind[T]) chains(r *rand.Rand) []detChain {
	set := func(o T, what string) detStep {
		return detStep{
			desc:  fmt.Sprintf("%s %s: set %s", k.name, metaKey(o), what),
			apply: func(tx *krt.Txn, in sources.StaticInputs) { setIn(tx, in, o.DeepCopy()) },
		}
	}
	del := func(o T) detStep {
		return detStep{
			desc:  fmt.Sprintf("%s %s: delete", k.name, metaKey(o)),
			apply: func(tx *krt.Txn, in sources.StaticInputs) { deleteIn[T](tx, in, metaKey(o)) },
		}
	}
	variant := func(o T) detStep { return set(k.vary(r, o), "variant") }
	var out []detChain
	for _, o := range k.finals {
		final := set(o, "final")
		switch r.IntN(8) {
		case 0, 1, 2, 3:
			out = append(out, detChain{final})
		case 4:
			out = append(out, detChain{variant(o), final})
		case 5:
			out = append(out, detChain{final, del(o), final})
		case 6:
			out = append(out, detChain{variant(o), del(o), variant(o), final})
		default:
			out = append(out, detChain{variant(o), variant(o), final})
		}
	}
	for _, o := range k.extras {
		extra := set(o, "extra")
		switch r.IntN(3) {
		case 0:
			out = append(out, detChain{extra, del(o)})
		case 1:
			out = append(out, detChain{extra, variant(o), del(o)})
		default:
			out = append(out, detChain{extra, del(o), variant(o), del(o)})
		}
	}
	if r.IntN(3) == 0 {
		out = append(out, detChain{{
			desc: k.name + ": relist",
			apply: func(tx *krt.Txn, in sources.StaticInputs) {
				items := make([]T, len(k.finals))
				for i, o := range k.finals {
					items[i] = o.DeepCopy()
				}
				if pods, ok := podInfos(items); ok {
					sources.StaticOf[*sources.PodInfo](in).In(tx).Reset(pods)
					return
				}
				sources.StaticOf[T](in).In(tx).Reset(items)
			},
		}})
	}
	return out
}

// detHistory returns a random history of the universe: every object's
// chain, interleaved at random.
func detHistory(r *rand.Rand, u detUniverse) []detStep {
	var chains []detChain
	chains = append(chains, detKind[*corev1.Namespace]{"namespace", u.namespaces, u.extraNamespaces, detVaryNamespace}.chains(r)...)
	chains = append(chains, detKind[*corev1.Node]{"node", u.nodes, u.extraNodes, detVaryNode}.chains(r)...)
	chains = append(chains, detKind[*corev1.Service]{"service", u.services, u.extraServices, detVaryService}.chains(r)...)
	chains = append(chains, detKind[*corev1.Pod]{"pod", u.pods, u.extraPods, detVaryPod}.chains(r)...)
	chains = append(chains, detKind[*discoveryv1.EndpointSlice]{"endpointslice", u.slices, u.extraSlices, detVarySlice}.chains(r)...)
	chains = append(chains, detKind[*gatewayv1.HTTPRoute]{"httproute", u.http, u.extraHTTP, detVaryHTTPRoute}.chains(r)...)
	chains = append(chains, detKind[*gatewayv1.GRPCRoute]{"grpcroute", u.grpc, u.extraGRPC, detVaryGRPCRoute}.chains(r)...)

	storeMesh := func(what string, m meshconfig.MeshConfig) detStep {
		return detStep{desc: "meshconfig: store " + what, apply: func(tx *krt.Txn, in sources.StaticInputs) { setIn(tx, in, m) }}
	}
	clearMesh := detStep{desc: "meshconfig: clear", apply: func(tx *krt.Txn, in sources.StaticInputs) {
		sources.StaticOf[meshconfig.MeshConfig](in).In(tx).Delete(krt.SingletonKey)
	}}
	final := storeMesh("final", u.mesh)
	switch r.IntN(4) {
	case 0:
		chains = append(chains, detChain{final})
	case 1:
		chains = append(chains, detChain{storeMesh("variant", detVaryMesh(r, u.mesh)), final})
	case 2:
		chains = append(chains, detChain{final, clearMesh, final})
	default:
		chains = append(chains, detChain{storeMesh("variant", detVaryMesh(r, u.mesh)), clearMesh, final})
	}

	// Pick each next step uniformly among the steps left, keeping every
	// chain's order.
	total := 0
	for _, c := range chains {
		total += len(c)
	}
	pos := make([]int, len(chains))
	out := make([]detStep, 0, total)
	for len(out) < total {
		n := r.IntN(total - len(out))
		for i, c := range chains {
			left := len(c) - pos[i]
			if n < left {
				out = append(out, c[pos[i]])
				pos[i]++
				break
			}
			n -= left
		}
	}
	return out
}

// detModels are the two model variants on one graph: the plain one and
// the one with namespace views.
type detModels struct {
	g            *krt.Graph
	in           sources.StaticInputs
	plain, views *Model
}

func newDetModels() detModels {
	g := krt.NewGraph()
	in := newTestInputs(g)
	return detModels{g: g, in: in, plain: Build(g, in.Inputs()), views: Build(g, in.Inputs(), WithNamespaceViews(true))}
}

// applyBatches writes the steps in transactions of random sizes, of at
// most maxBatch steps.
func (d detModels) applyBatches(r *rand.Rand, steps []detStep, maxBatch int) {
	for i := 0; i < len(steps); {
		n := min(1+r.IntN(maxBatch), len(steps)-i)
		batch := steps[i : i+n]
		d.g.Update(func(tx *krt.Txn) {
			for _, s := range batch {
				s.apply(tx, d.in)
			}
		})
		i += n
	}
}

// loadFinal writes the final universe in one transaction, as a replica's
// initial list does.
func (d detModels) loadFinal(u detUniverse) {
	d.g.Update(func(tx *krt.Txn) { detLoad(tx, d.in, u) })
}

func detLoad(tx *krt.Txn, in sources.StaticInputs, u detUniverse) {
	setIn(tx, in, u.namespaces...)
	setIn(tx, in, u.nodes...)
	setIn(tx, in, u.services...)
	setIn(tx, in, u.pods...)
	setIn(tx, in, u.slices...)
	setIn(tx, in, u.http...)
	setIn(tx, in, u.grpc...)
	setIn(tx, in, u.mesh)
}

// setIn sets items, as part of tx, in the collection of in holding T; a
// Pod as its PodInfo, as the sources store it.
func setIn[T any](tx *krt.Txn, in sources.StaticInputs, items ...T) {
	if pods, ok := podInfos(items); ok {
		sources.StaticOf[*sources.PodInfo](in).In(tx).Set(pods...)
		return
	}
	sources.StaticOf[T](in).In(tx).Set(items...)
}

// deleteIn deletes key, as part of tx, from the collection of in holding
// T (the PodInfos for a Pod).
func deleteIn[T any](tx *krt.Txn, in sources.StaticInputs, key string) {
	if isPod[T]() {
		sources.StaticOf[*sources.PodInfo](in).In(tx).Delete(key)
		return
	}
	sources.StaticOf[T](in).In(tx).Delete(key)
}

// detSnapshot is what a replica serves and reports.
type detSnapshot struct {
	// xds maps "<model>/<collection>/<name>" to the deterministic bytes of
	// the resource, msgs to its message, vis to its visibility.
	xds  map[string][]byte
	msgs map[string]proto.Message
	vis  map[string]string
	// items maps "<model>/<collection>" to the collection's items, in key
	// order: the route status and the model's own view.
	items map[string]any
}

func snapshotResources[M proto.Message](t testing.TB, s *detSnapshot, prefix string, c krt.Collection[Resource[M]]) {
	t.Helper()
	for _, r := range c.List() {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(r.Message())
		if err != nil {
			t.Fatalf("%s/%s: marshal: %v", prefix, r.Name, err)
		}
		key := prefix + "/" + r.Name
		s.xds[key], s.msgs[key] = b, r.Message()
		s.vis[key] = fmt.Sprintf("visibleTo=%q hiddenFrom=%q", r.VisibleTo, r.HiddenFrom)
	}
}

func (d detModels) snapshot(t testing.TB) detSnapshot {
	t.Helper()
	s := detSnapshot{xds: map[string][]byte{}, msgs: map[string]proto.Message{}, vis: map[string]string{}, items: map[string]any{}}
	for name, m := range map[string]*Model{"plain": d.plain, "views": d.views} {
		snapshotResources(t, &s, name+"/Clusters", m.Clusters)
		snapshotResources(t, &s, name+"/ClusterLoadAssignments", m.ClusterLoadAssignments)
		snapshotResources(t, &s, name+"/Listeners", m.Listeners)
		snapshotResources(t, &s, name+"/RouteConfigurations", m.RouteConfigurations)
		snapshotResources(t, &s, name+"/GRPCListeners", m.GRPCListeners)
		snapshotResources(t, &s, name+"/GRPCRouteConfigurations", m.GRPCRouteConfigurations)
		snapshotResources(t, &s, name+"/SidecarListeners", m.SidecarListeners)
		snapshotResources(t, &s, name+"/SidecarRouteConfigurations", m.SidecarRouteConfigurations)
		s.items[name+"/RouteStatus"] = m.RouteStatus.List()
		s.items[name+"/MeshConfig"] = m.MeshConfig.List()
		s.items[name+"/Services"] = m.Services.List()
		s.items[name+"/Workloads"] = m.Workloads.List()
		s.items[name+"/Endpoints"] = m.Endpoints.List()
		s.items[name+"/RouteBindings"] = m.RouteBindings.List()
		s.items[name+"/PortRoutes"] = m.PortRoutes.List()
	}
	// An input whose computation fails serves its last good output, which
	// depends on the history: the final inputs must fail nowhere. Key
	// conflicts are resolved by input key, and must be the same.
	var health []string
	for _, c := range d.g.Describe().Collections {
		if c.FailingInputs > 0 || c.Conflicts > 0 {
			health = append(health, fmt.Sprintf("%d %s: %d failing inputs, %d conflicts", c.ID, c.Name, c.FailingInputs, c.Conflicts))
		}
	}
	s.items["graph"] = health
	return s
}

// detMaxReports bounds the differences reported per comparison.
const detMaxReports = 6

// compare reports every difference between want and got; it returns
// whether there was none.
func (want detSnapshot) compare(t testing.TB, got detSnapshot) bool {
	t.Helper()
	reports := 0
	report := func(format string, args ...any) {
		t.Helper()
		if reports++; reports <= detMaxReports {
			t.Errorf(format, args...)
		}
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range want.xds {
			if !yield(k) {
				return
			}
		}
		for k := range got.xds {
			if _, ok := want.xds[k]; !ok && !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		wb, inWant := want.xds[k]
		gb, inGot := got.xds[k]
		switch {
		case !inWant:
			report("resource %s: unexpected:\n%s", k, detText(got.msgs[k]))
		case !inGot:
			report("resource %s: missing; want:\n%s", k, detText(want.msgs[k]))
		case !bytes.Equal(wb, gb):
			report("resource %s: bytes differ (-want +got):\n%s", k, detLineDiff(detText(want.msgs[k]), detText(got.msgs[k])))
		case want.vis[k] != got.vis[k]:
			report("resource %s: %s, want %s", k, got.vis[k], want.vis[k])
		}
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range want.items {
			if !yield(k) {
				return
			}
		}
	}) {
		if !reflect.DeepEqual(want.items[k], got.items[k]) {
			report("%s differ (-want +got):\n%s", k, detLineDiff(detJSON(want.items[k]), detJSON(got.items[k])))
		}
	}
	if reports > detMaxReports {
		t.Errorf("... and %d more differences", reports-detMaxReports)
	}
	return reports == 0
}

func detText(m proto.Message) string {
	return prototext.MarshalOptions{Multiline: true, Indent: "  "}.Format(m)
}

func detJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprintf("%+v (json: %v)", v, err)
	}
	return string(b)
}

// detLineDiff returns the lines of a and b that differ ("-" from a, "+"
// from b), with two lines of context, from a longest common subsequence.
func detLineDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	if len(x)*len(y) > 4_000_000 {
		return "--- want\n" + a + "\n+++ got\n" + b
	}
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var lines []string
	var changed []bool
	for i, j := 0, 0; i < len(x) || j < len(y); {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			lines, changed = append(lines, "  "+x[i]), append(changed, false)
			i, j = i+1, j+1
		case j < len(y) && (i == len(x) || lcs[i][j+1] >= lcs[i+1][j]):
			lines, changed = append(lines, "+ "+y[j]), append(changed, true)
			j++
		default:
			lines, changed = append(lines, "- "+x[i]), append(changed, true)
			i++
		}
	}
	const context = 2
	var out []string
	last := -1
	for i := range lines {
		near := false
		for j := max(0, i-context); j <= min(len(lines)-1, i+context); j++ {
			near = near || changed[j]
		}
		if !near {
			continue
		}
		if last >= 0 && i > last+1 {
			out = append(out, "  ...")
		}
		out = append(out, lines[i])
		last = i
	}
	return strings.Join(out, "\n")
}

// checkUniverseCovered asserts that the reference output exercises what
// the universe was built for, so a regression that emptied the model
// could not pass as deterministic.
func checkUniverseCovered(t *testing.T, d detModels, s detSnapshot) {
	t.Helper()
	for _, c := range d.g.Describe().Collections {
		if c.FailingInputs > 0 {
			t.Errorf("reference graph: %s has %d failing inputs: %+v", c.Name, c.FailingInputs, c.RecentErrors)
		}
	}
	for _, k := range []string{
		"plain/Clusters/outbound|80||web.alpha.svc.cluster.local",
		"plain/ClusterLoadAssignments/outbound|80||legacy.alpha.svc.cluster.local",
		"plain/Listeners/web.alpha.svc.cluster.local:80",
		"plain/Listeners/10.96.1.1_5432",
		"plain/Listeners/0.0.0.0_80",
		"plain/RouteConfigurations/api.alpha.svc.cluster.local:8080",
		"plain/RouteConfigurations/80",
		"views/RouteConfigurations/80~gamma",
		"views/Listeners/0.0.0.0_80~alpha",
	} {
		if _, ok := s.xds[k]; !ok {
			t.Errorf("reference output lacks %s", k)
		}
	}
	unhealthy := false
	if m, ok := s.msgs["plain/ClusterLoadAssignments/outbound|80||web.alpha.svc.cluster.local"]; ok {
		for _, l := range m.(*endpointv3.ClusterLoadAssignment).GetEndpoints() {
			for _, e := range l.GetLbEndpoints() {
				unhealthy = unhealthy || e.GetHealthStatus() == corev3.HealthStatus_UNHEALTHY
			}
		}
	}
	if !unhealthy {
		t.Errorf("reference output has no unhealthy endpoint for alpha/web:80")
	}
	var accepted, rejected int
	for _, st := range s.items["plain/RouteStatus"].([]RouteStatus) {
		for _, p := range st.Parents {
			if p.Accepted() {
				accepted++
			} else {
				rejected++
			}
		}
	}
	if accepted < 10 || rejected < 5 {
		t.Errorf("reference route status: %d parents accepted, %d not; want at least 10 and 5", accepted, rejected)
	}
	t.Logf("reference: %d xDS resources, %d route parents accepted, %d not; %q", len(s.xds), accepted, rejected, s.items["graph"])
}

func TestModelDeterministic(t *testing.T) {
	u := newDetUniverse()

	// The reference: a replica that builds its model, then lists
	// everything at once.
	ref := newDetModels()
	ref.loadFinal(u)
	want := ref.snapshot(t)
	validateModel(t, ref.plain)
	validateModel(t, ref.views)
	checkUniverseCovered(t, ref, want)

	t.Run("built after load", func(t *testing.T) {
		// A model built over inputs already listed computes its initial
		// state in the constructors' own transactions.
		g := krt.NewGraph()
		in := newTestInputs(g)
		g.Update(func(tx *krt.Txn) { detLoad(tx, in, u) })
		d := detModels{g: g, in: in, plain: Build(g, in.Inputs()), views: Build(g, in.Inputs(), WithNamespaceViews(true))}
		want.compare(t, d.snapshot(t))
	})

	t.Run("same history twice", func(t *testing.T) {
		// Sanity: two independent runs of one history agree with each
		// other, whatever they do against the reference.
		run := func() detSnapshot {
			r := rand.New(rand.NewPCG(7, 7))
			d := newDetModels()
			d.applyBatches(r, detHistory(r, u), 8)
			return d.snapshot(t)
		}
		run().compare(t, run())
	})

	seeds := 30
	if testing.Short() {
		seeds = 8
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 0x6d65736864))
			steps := detHistory(r, u)
			// From one transaction per write, as informers deliver events,
			// to large batches.
			maxBatch := []int{1, 3, 10, 50}[seed%4]
			d := newDetModels()
			d.applyBatches(r, steps, maxBatch)
			if !want.compare(t, d.snapshot(t)) {
				var descs []string
				for _, s := range steps {
					descs = append(descs, s.desc)
				}
				t.Logf("history (%d steps, batches of at most %d):\n%s", len(steps), maxBatch, strings.Join(descs, "\n"))
			}
		})
	}
}
