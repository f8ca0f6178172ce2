package routestatus

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/internal/leakcheck"
)

// ours returns the route's status entries of the test controller.
func ours(parents []gatewayv1.RouteParentStatus) []gatewayv1.RouteParentStatus {
	return owned(controller, parents)
}

// wantCond is an expected condition: type, status and reason.
type wantCond struct {
	typ    string
	status metav1.ConditionStatus
	reason string
}

var (
	accepted      = wantCond{"Accepted", metav1.ConditionTrue, "Accepted"}
	resolved      = wantCond{"ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs"}
	notResolvedAs = func(reason string) wantCond { return wantCond{"ResolvedRefs", metav1.ConditionFalse, reason} }
	notAcceptedAs = func(reason string) wantCond { return wantCond{"Accepted", metav1.ConditionFalse, reason} }
)

// hasConds reports whether p holds exactly the wanted conditions, each
// observing generation gen and with a transition time.
func hasConds(p gatewayv1.RouteParentStatus, gen int64, want ...wantCond) bool {
	if len(p.Conditions) != len(want) {
		return false
	}
	for _, w := range want {
		c := meta.FindStatusCondition(p.Conditions, w.typ)
		if c == nil || c.Status != w.status || c.Reason != w.reason || c.ObservedGeneration != gen ||
			c.LastTransitionTime.IsZero() || c.Message == "" {
			return false
		}
	}
	return true
}

// waitStats waits until the writer's counters satisfy ok: a write shows
// on the server a moment before the writer counts it.
func (f *fixture) waitStats(what string, ok func(Stats) bool) {
	f.t.Helper()
	eventually(f.t, func() string { return fmt.Sprintf("want %s; stats %+v", what, f.w.Stats()) }, func() bool { return ok(f.w.Stats()) })
}

// TestAcceptedRoutes: an HTTPRoute and a GRPCRoute to an existing Service
// are accepted with all references resolved, for the route's generation,
// under the controller's name and the parentRef as written.
func TestAcceptedRoutes(t *testing.T) {
	f := newFixture(t, Options{})
	f.createService("web", 80, 9090)
	f.createHTTPRoute(f.httpRoute("to-web", []gatewayv1.ParentReference{serviceParent("web", 80)}, backend("web", 80)))
	grpcRoute := &gatewayv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Name: "grpc-web", Namespace: f.ns}}
	grpcRoute.Spec.ParentRefs = []gatewayv1.ParentReference{serviceParent("web", 0)}
	grpcRoute.Spec.Rules = []gatewayv1.GRPCRouteRule{{BackendRefs: []gatewayv1.GRPCBackendRef{
		{BackendRef: gatewayv1.BackendRef{BackendObjectReference: backend("web", 9090)}}}}}
	if _, err := f.gw.GatewayV1().GRPCRoutes(f.ns).Create(t.Context(), grpcRoute, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.run()

	r := f.waitHTTPStatus("to-web", func(r *gatewayv1.HTTPRoute) bool { return len(ours(r.Status.Parents)) == 1 })
	p := ours(r.Status.Parents)[0]
	if !hasConds(p, r.Generation, accepted, resolved) {
		t.Errorf("HTTPRoute conditions = %s\nwant Accepted=True/Accepted, ResolvedRefs=True/ResolvedRefs at generation %d", dump(p.Conditions), r.Generation)
	}
	if len(r.Status.Parents) != 1 || string(p.ControllerName) != controller || !equality.Semantic.DeepEqual(p.ParentRef, r.Spec.ParentRefs[0]) {
		t.Errorf("HTTPRoute status = %s, want one entry of %s for parentRef %s", dump(r.Status), controller, dump(r.Spec.ParentRefs[0]))
	}

	var g *gatewayv1.GRPCRoute
	eventually(t, func() string { return "GRPCRoute status: " + dump(g) }, func() bool {
		var err error
		g, err = f.gw.GatewayV1().GRPCRoutes(f.ns).Get(t.Context(), "grpc-web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(ours(g.Status.Parents)) == 1 && hasConds(g.Status.Parents[0], g.Generation, accepted, resolved)
	})
	if !equality.Semantic.DeepEqual(g.Status.Parents[0].ParentRef, g.Spec.ParentRefs[0]) {
		t.Errorf("GRPCRoute parentRef = %s, want %s", dump(g.Status.Parents[0].ParentRef), dump(g.Spec.ParentRefs[0]))
	}
	f.waitStats("2 written", func(s Stats) bool { return s.Written == 2 })
	if s := f.w.Stats(); s.Errors != 0 || f.puts.Load() != 2 {
		t.Errorf("stats = %+v, %d PUTs; want 2 writes, no errors", s, f.puts.Load())
	}
}

// TestConditionReasons covers every reason the model reports, as the
// server stores them.
func TestConditionReasons(t *testing.T) {
	f := newFixture(t, Options{})
	f.createService("web", 80)
	web := []gatewayv1.ParentReference{serviceParent("web", 80)}
	other := gatewayv1.Namespace("elsewhere")
	crossNS := backend("web", 80)
	crossNS.Namespace = &other
	widget := backend("thing", 0)
	group, kind := gatewayv1.Group("example.com"), gatewayv1.Kind("Widget")
	widget.Group, widget.Kind = &group, &kind
	redirect := f.httpRoute("redirect", web)
	redirect.Spec.Rules[0].Filters = []gatewayv1.HTTPRouteFilter{{
		Type: gatewayv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{StatusCode: new(301)}}}

	cases := []struct {
		route *gatewayv1.HTTPRoute
		want  []wantCond
	}{
		{f.httpRoute("missing-backend", web, backend("nope", 80)), []wantCond{accepted, notResolvedAs("BackendNotFound")}},
		{f.httpRoute("missing-port", web, backend("web", 81)), []wantCond{accepted, notResolvedAs("BackendNotFound")}},
		{f.httpRoute("cross-namespace", web, crossNS), []wantCond{accepted, notResolvedAs("RefNotPermitted")}},
		{f.httpRoute("other-kind", web, widget), []wantCond{accepted, notResolvedAs("InvalidKind")}},
		{redirect, []wantCond{notAcceptedAs("UnsupportedValue"), resolved}},
		{f.httpRoute("missing-parent", []gatewayv1.ParentReference{serviceParent("ghost", 0)}, backend("web", 80)),
			[]wantCond{notAcceptedAs("NoMatchingParent"), resolved}},
		{f.httpRoute("missing-parent-port", []gatewayv1.ParentReference{serviceParent("web", 8080)}, backend("web", 80)),
			[]wantCond{notAcceptedAs("NoMatchingParent"), resolved}},
	}
	for _, c := range cases {
		f.createHTTPRoute(c.route)
	}
	f.run()
	for _, c := range cases {
		f.waitHTTPStatus(c.route.Name, func(r *gatewayv1.HTTPRoute) bool {
			o := ours(r.Status.Parents)
			return len(o) == 1 && hasConds(o[0], r.Generation, c.want...)
		})
	}
	f.wantNoErrors("")
}

// TestFixAndGeneration: creating the missing backend flips ResolvedRefs
// (with a new transition time, Accepted keeping its own); a spec change
// moves observedGeneration.
func TestFixAndGeneration(t *testing.T) {
	f := newFixture(t, Options{})
	f.createWebRoute("api")
	f.run()
	before := f.waitHTTPStatus("r", func(r *gatewayv1.HTTPRoute) bool {
		o := ours(r.Status.Parents)
		return len(o) == 1 && hasConds(o[0], 1, accepted, notResolvedAs("BackendNotFound"))
	})
	cond := func(r *gatewayv1.HTTPRoute, typ string) metav1.Condition {
		return *meta.FindStatusCondition(ours(r.Status.Parents)[0].Conditions, typ)
	}
	// Transition times have seconds: let one pass so a new one differs.
	time.Sleep(1100 * time.Millisecond)

	f.createService("api", 80)
	fixed := f.waitHTTPStatus("r", func(r *gatewayv1.HTTPRoute) bool {
		return hasConds(ours(r.Status.Parents)[0], 1, accepted, resolved)
	})
	if a, b := cond(before, "Accepted"), cond(fixed, "Accepted"); !a.LastTransitionTime.Equal(&b.LastTransitionTime) {
		t.Errorf("Accepted stayed True but its transition time moved from %v to %v", a.LastTransitionTime, b.LastTransitionTime)
	}
	if a, b := cond(before, "ResolvedRefs"), cond(fixed, "ResolvedRefs"); !a.LastTransitionTime.Before(&b.LastTransitionTime) {
		t.Errorf("ResolvedRefs flipped but its transition time went from %v to %v", a.LastTransitionTime, b.LastTransitionTime)
	}

	updated := f.updateHTTPRoute("r", func(r *gatewayv1.HTTPRoute) {
		r.Spec.Rules[0].Matches = []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Value: new("/v2")}}}
	})
	if updated.Generation != 2 {
		t.Fatalf("generation after a spec change = %d, want 2", updated.Generation)
	}
	regen := f.waitHTTPStatus("r", func(r *gatewayv1.HTTPRoute) bool {
		return hasConds(ours(r.Status.Parents)[0], 2, accepted, resolved)
	})
	if a, b := cond(fixed, "ResolvedRefs"), cond(regen, "ResolvedRefs"); !a.LastTransitionTime.Equal(&b.LastTransitionTime) {
		t.Errorf("a new generation with the same status moved the transition time from %v to %v", a.LastTransitionTime, b.LastTransitionTime)
	}
}

// TestOtherControllersKept: entries of other controllers stay as they are
// through every write, the writer's own entry for a parent the route no
// longer has is removed, and so are all its entries once the route has
// no Service parent.
func TestOtherControllersKept(t *testing.T) {
	f := newFixture(t, Options{})
	f.createService("web", 80)
	gw := gatewayParent("gw")
	created := f.createHTTPRoute(f.httpRoute("r", []gatewayv1.ParentReference{gw, serviceParent("web", 80)}, backend("web", 80)))

	// Before the writer runs, a gateway controller has written its entry,
	// and a previous term left one of ours for a parent since removed.
	stamp := metav1.NewTime(time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC))
	created.Status.Parents = []gatewayv1.RouteParentStatus{
		{ParentRef: serviceParent("gone", 0), ControllerName: controller, Conditions: []metav1.Condition{
			{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", Message: "old", ObservedGeneration: 1, LastTransitionTime: stamp}}},
		{ParentRef: gw, ControllerName: "example.com/gateway-controller", Conditions: []metav1.Condition{
			{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", Message: "theirs", ObservedGeneration: 1, LastTransitionTime: stamp}}},
	}
	withTheirs, err := f.gw.GatewayV1().HTTPRoutes(f.ns).UpdateStatus(t.Context(), created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	theirs := withTheirs.Status.Parents[1]
	keepsTheirs := func(r *gatewayv1.HTTPRoute) bool {
		n := 0
		for _, p := range r.Status.Parents {
			if p.ControllerName != controller {
				n++
				if !equality.Semantic.DeepEqual(p, theirs) {
					return false
				}
			}
		}
		return n == 1
	}

	f.run()
	r := f.waitHTTPStatus("r", func(r *gatewayv1.HTTPRoute) bool {
		o := ours(r.Status.Parents)
		return len(o) == 1 && o[0].ParentRef.Name == "web"
	})
	if !keepsTheirs(r) || !hasConds(ours(r.Status.Parents)[0], 1, accepted, resolved) {
		t.Errorf("status = %s\nwant the gateway controller's entry %s kept and ours for web", dump(r.Status), dump(theirs))
	}

	f.updateHTTPRoute("r", func(r *gatewayv1.HTTPRoute) { r.Spec.ParentRefs = []gatewayv1.ParentReference{gw} })
	r = f.waitHTTPStatus("r", func(r *gatewayv1.HTTPRoute) bool { return len(ours(r.Status.Parents)) == 0 })
	if !keepsTheirs(r) {
		t.Errorf("status = %s\nwant only the gateway controller's entry %s", dump(r.Status), dump(theirs))
	}
	f.waitStats("2 written (add ours, remove ours)", func(s Stats) bool { return s.Written == 2 })
	if s := f.w.Stats(); s.Errors != 0 || f.puts.Load() != 2 {
		t.Errorf("stats = %+v, %d PUTs; want 2 writes, no errors", s, f.puts.Load())
	}
}

// TestUnchangedNotRewritten: a new term (which reconciles everything) and
// a change that does not touch the status write nothing.
func TestUnchangedNotRewritten(t *testing.T) {
	f := newFixture(t, Options{})
	f.createWebRoute("web")
	stop := f.run()
	written := f.waitHTTPStatus("r", func(r *gatewayv1.HTTPRoute) bool { return len(ours(r.Status.Parents)) == 1 })
	// Let the writer see its own write come back.
	eventually(t, func() string { return fmt.Sprintf("stats %+v", f.w.Stats()) }, func() bool {
		r, ok := f.model.RouteStatus.Get(collections.RouteKey(collections.KindHTTPRoute, f.ns, "r"))
		s := f.w.Stats()
		return ok && r.Generation == 1 && s.Unchanged >= 1 && s.Queue == 0
	})
	stop()
	first, puts := f.w.Stats(), f.puts.Load()
	if first.Written != 1 || puts != 1 {
		t.Fatalf("first term: stats %+v, %d PUTs; want exactly one write", first, puts)
	}

	f.run()
	eventually(t, func() string { return fmt.Sprintf("stats %+v", f.w.Stats()) }, func() bool {
		return f.w.Stats().Unchanged > first.Unchanged
	})
	f.updateHTTPRoute("r", func(r *gatewayv1.HTTPRoute) { r.Labels = map[string]string{"touched": "yes"} })
	eventually(t, func() string { return fmt.Sprintf("stats %+v", f.w.Stats()) }, func() bool {
		return f.w.Stats().Unchanged > first.Unchanged+1
	})
	if s := f.w.Stats(); s.Written != first.Written || f.puts.Load() != puts || s.Errors != 0 {
		t.Errorf("after a resync and a label change: stats %+v, %d PUTs; want no write", s, f.puts.Load())
	}
	r := f.getHTTPRoute("r")
	if !equality.Semantic.DeepEqual(r.Status, written.Status) {
		t.Errorf("status changed:\n%s\nwas\n%s", dump(r.Status), dump(written.Status))
	}
}

// TestRestoresRemovedEntry: when someone else drops the writer's entry,
// the writer puts it back.
func TestRestoresRemovedEntry(t *testing.T) {
	f := newFixture(t, Options{})
	f.createWebRoute("web")
	f.run()
	r := f.waitHTTPStatus("r", func(r *gatewayv1.HTTPRoute) bool { return len(ours(r.Status.Parents)) == 1 })
	want := r.Status.Parents[0]
	r.Status.Parents = []gatewayv1.RouteParentStatus{}
	cleared, err := f.gw.GatewayV1().HTTPRoutes(f.ns).UpdateStatus(t.Context(), r, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	restored := f.waitHTTPStatus("r", func(r *gatewayv1.HTTPRoute) bool {
		return r.ResourceVersion != cleared.ResourceVersion && len(ours(r.Status.Parents)) == 1
	})
	if !equality.Semantic.DeepEqual(restored.Status.Parents[0].ParentRef, want.ParentRef) ||
		!hasConds(restored.Status.Parents[0], restored.Generation, accepted, resolved) {
		t.Errorf("restored status = %s, want %s", dump(restored.Status), dump(want))
	}
	f.waitStats("2 written", func(s Stats) bool { return s.Written == 2 })
}

// TestConflictRetried: someone else updates the route's status between
// the writer's read and its write; the write conflicts, is retried on a
// fresh copy, and keeps the other update.
func TestConflictRetried(t *testing.T) {
	f := newFixture(t, Options{})
	f.createService("web", 80)
	f.createHTTPRoute(f.httpRoute("r", []gatewayv1.ParentReference{gatewayParent("gw"), serviceParent("web", 80)}, backend("web", 80)))
	var interfered atomic.Bool
	hook := func(req *http.Request) {
		if !interfered.CompareAndSwap(false, true) {
			return
		}
		// The test's own client, which has no hook.
		r, err := f.gw.GatewayV1().HTTPRoutes(f.ns).Get(context.Background(), "r", metav1.GetOptions{})
		if err != nil {
			t.Error(err)
			return
		}
		r.Status.Parents = append(r.Status.Parents, gatewayv1.RouteParentStatus{
			ParentRef: gatewayParent("gw"), ControllerName: "example.com/gateway-controller",
			Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted",
				Message: "theirs", ObservedGeneration: 1, LastTransitionTime: metav1.Now()}}})
		if _, err := f.gw.GatewayV1().HTTPRoutes(f.ns).UpdateStatus(context.Background(), r, metav1.UpdateOptions{}); err != nil {
			t.Error(err)
		}
	}
	f.beforePut.Store(&hook)
	f.run()
	r := f.waitHTTPStatus("r", func(r *gatewayv1.HTTPRoute) bool {
		return len(ours(r.Status.Parents)) == 1 && len(r.Status.Parents) == 2
	})
	if !hasConds(ours(r.Status.Parents)[0], 1, accepted, resolved) {
		t.Errorf("status = %s", dump(r.Status))
	}
	f.waitStats("1 written", func(s Stats) bool { return s.Written == 1 })
	if s := f.w.Stats(); s.Conflicts != 1 || s.Errors != 0 || f.puts.Load() != 2 {
		t.Errorf("stats = %+v, %d PUTs; want a conflict, then one write, no errors", s, f.puts.Load())
	}
}

// TestNotFoundIsNoError: a route deleted just before its write is counted
// as not found, not as an error, and not retried.
func TestNotFoundIsNoError(t *testing.T) {
	f := newFixture(t, Options{})
	f.createWebRoute("web")
	hook := func(req *http.Request) {
		if err := f.gw.GatewayV1().HTTPRoutes(f.ns).Delete(context.Background(), "r", metav1.DeleteOptions{}); err != nil {
			t.Error(err)
		}
	}
	f.beforePut.Store(&hook)
	f.run()
	eventually(t, func() string { return fmt.Sprintf("stats %+v", f.w.Stats()) }, func() bool { return f.w.Stats().NotFound >= 1 })
	time.Sleep(300 * time.Millisecond) // a retry would come within its backoff
	if s := f.w.Stats(); s.Errors != 0 || s.Written != 0 || f.puts.Load() != 1 {
		t.Errorf("stats = %+v, %d PUTs; want one PUT, not found, no error", s, f.puts.Load())
	}
}

// TestBurstCoalesced: several spec changes in a row, while the token
// bucket holds writes back, end in one write of the last generation.
func TestBurstCoalesced(t *testing.T) {
	// One token per 5 s: the five updates, ten API calls, fit within one
	// even on a busy API server, so the burst straddles at most one token.
	f := newFixture(t, Options{QPS: 0.2, Burst: 1})
	f.createWebRoute("web")
	f.run()
	f.waitHTTPStatus("r", func(r *gatewayv1.HTTPRoute) bool { return len(ours(r.Status.Parents)) == 1 })
	var last *gatewayv1.HTTPRoute
	for i := range 5 {
		last = f.updateHTTPRoute("r", func(r *gatewayv1.HTTPRoute) {
			r.Spec.Rules[0].Matches = []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Value: new(fmt.Sprintf("/v%d", i))}}}
		})
	}
	f.waitHTTPStatus("r", func(r *gatewayv1.HTTPRoute) bool {
		return hasConds(ours(r.Status.Parents)[0], last.Generation, accepted, resolved)
	})
	// One write for the route, then one for the burst (two if the burst
	// straddled the coalescing of its first change): five generations
	// would be five writes one by one.
	puts := f.puts.Load()
	if puts > 3 {
		t.Errorf("%d PUTs for 1 + 5 generations; want at most 3", puts)
	}
	f.waitStats(fmt.Sprintf("%d written", puts), func(s Stats) bool { return s.Written == uint64(puts) })
	f.wantNoErrors("")
	t.Logf("writes: %d for generations 1..%d", puts, last.Generation)
}

// TestStopsWhenCancelled: after Run's context ends, nothing more is
// written and nothing of Run is left running; the next term catches up.
func TestStopsWhenCancelled(t *testing.T) {
	f := newFixture(t, Options{})
	f.createService("web", 80)
	f.createHTTPRoute(f.httpRoute("a", []gatewayv1.ParentReference{serviceParent("web", 80)}, backend("web", 80)))
	before := goleak.IgnoreCurrent()
	stop := f.run()
	f.waitHTTPStatus("a", func(r *gatewayv1.HTTPRoute) bool { return len(ours(r.Status.Parents)) == 1 })
	stop()
	leakcheck.VerifyNone(t, append(slices.Clone(leakOptions), before)...)
	puts := f.puts.Load()

	f.createHTTPRoute(f.httpRoute("b", []gatewayv1.ParentReference{serviceParent("web", 80)}, backend("web", 80)))
	eventually(t, func() string { return "no computed status for b" }, func() bool {
		_, ok := f.model.RouteStatus.Get(collections.RouteKey(collections.KindHTTPRoute, f.ns, "b"))
		return ok
	})
	time.Sleep(300 * time.Millisecond)
	if r := f.getHTTPRoute("b"); len(r.Status.Parents) != 0 || f.puts.Load() != puts || f.w.Stats().Queue != 0 {
		t.Fatalf("while stopped: status of b %s, PUTs %d (was %d), queue %d; want nothing", dump(r.Status), f.puts.Load(), puts, f.w.Stats().Queue)
	}

	f.run()
	f.waitHTTPStatus("b", func(r *gatewayv1.HTTPRoute) bool { return len(ours(r.Status.Parents)) == 1 })
}

// TestCancelWhileThrottled: a write waiting for a token is abandoned at
// once when the context ends.
func TestCancelWhileThrottled(t *testing.T) {
	f := newFixture(t, Options{QPS: 0.05, Burst: 1}) // one write, then one per 20 s
	f.createService("web", 80)
	for _, name := range []string{"a", "b"} {
		f.createHTTPRoute(f.httpRoute(name, []gatewayv1.ParentReference{serviceParent("web", 80)}, backend("web", 80)))
	}
	stop := f.run()
	var pending string
	eventually(t, func() string { return fmt.Sprintf("stats %+v", f.w.Stats()) }, func() bool {
		a, b := len(ours(f.getHTTPRoute("a").Status.Parents)), len(ours(f.getHTTPRoute("b").Status.Parents))
		switch {
		case a == 1 && b == 0:
			pending = "b"
		case a == 0 && b == 1:
			pending = "a"
		}
		return pending != ""
	})
	time.Sleep(200 * time.Millisecond) // the worker now waits for a token
	start := time.Now()
	stop()
	// The next token is 20 s away: a wait that ignored the context would
	// take that long; 5 s leaves a busy machine slack.
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run took %v to return", d)
	}
	time.Sleep(200 * time.Millisecond)
	if r := f.getHTTPRoute(pending); len(r.Status.Parents) != 0 || f.puts.Load() != 1 {
		t.Errorf("route %s: status %s, %d PUTs; want it unwritten after cancel", pending, dump(r.Status), f.puts.Load())
	}
	f.wantNoErrors("a cancelled wait is no error")
}

// TestFailingReported: a write the API server refuses (the route's
// status.parents would exceed the CRD's 32 entries, all but ours another
// controller's) is counted, logged and listed by Failing until the route
// changes so that the write succeeds.
func TestFailingReported(t *testing.T) {
	f := newFixture(t, Options{})
	f.createWebRoute("web")
	r := f.getHTTPRoute("r")
	for i := range 32 {
		r.Status.Parents = append(r.Status.Parents, gatewayv1.RouteParentStatus{
			ParentRef: gatewayParent(fmt.Sprintf("gw%d", i)), ControllerName: "example.com/gateway-controller",
			Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted",
				ObservedGeneration: 1, LastTransitionTime: metav1.Now()}}})
	}
	if _, err := f.gw.GatewayV1().HTTPRoutes(f.ns).UpdateStatus(context.Background(), r, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.run()
	key := "HTTPRoute/" + f.ns + "/r"
	eventually(t, func() string { return fmt.Sprintf("failing %+v, stats %+v", f.w.Failing(), f.w.Stats()) }, func() bool {
		fs := f.w.Failing()
		return len(fs) == 1 && fs[0].Key == key && fs[0].Error != "" && !fs[0].Since.IsZero() && f.w.Stats().Errors >= 1
	})

	// The other controller gives up its entries: ours now fits.
	r = f.getHTTPRoute("r")
	r.Status.Parents = []gatewayv1.RouteParentStatus{} // the CRD requires the field
	if _, err := f.gw.GatewayV1().HTTPRoutes(f.ns).UpdateStatus(context.Background(), r, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitHTTPStatus("r", func(r *gatewayv1.HTTPRoute) bool { return len(ours(r.Status.Parents)) == 1 })
	eventually(t, func() string { return fmt.Sprintf("failing %+v", f.w.Failing()) }, func() bool { return len(f.w.Failing()) == 0 })
}
