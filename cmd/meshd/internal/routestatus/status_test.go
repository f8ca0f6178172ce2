package routestatus

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshd/meshd/collections"
)

func sectionParent(name, section string) gatewayv1.ParentReference {
	ref := serviceParent(name, 0)
	s := gatewayv1.SectionName(section)
	ref.SectionName = &s
	return ref
}

func gatewayParent(name string) gatewayv1.ParentReference {
	return gatewayv1.ParentReference{Name: gatewayv1.ObjectName(name)}
}

func TestMatchParents(t *testing.T) {
	other := gatewayv1.Namespace("other")
	crossNS := serviceParent("db", 0)
	crossNS.Namespace = &other
	for _, tc := range []struct {
		name     string
		refs     []gatewayv1.ParentReference
		computed []collections.ParentStatus
		want     []int
	}{{
		name:     "in order, skipping gateways",
		refs:     []gatewayv1.ParentReference{gatewayParent("gw"), serviceParent("web", 80), crossNS, sectionParent("web", "grpc")},
		computed: []collections.ParentStatus{{Service: "ns/web", Port: 80}, {Service: "other/db"}, {Service: "ns/web", Port: 9090}},
		want:     []int{-1, 0, 1, 2},
	}, {
		name:     "missing service reports port 0 for a ref with a port",
		refs:     []gatewayv1.ParentReference{serviceParent("ghost", 80)},
		computed: []collections.ParentStatus{{Service: "ns/ghost", Port: 0}},
		want:     []int{0},
	}, {
		name:     "a section name resolving to an earlier port is reported once",
		refs:     []gatewayv1.ParentReference{serviceParent("web", 80), sectionParent("web", "http"), serviceParent("api", 0)},
		computed: []collections.ParentStatus{{Service: "ns/web", Port: 80}, {Service: "ns/api"}},
		want:     []int{0, 0, 1},
	}, {
		name:     "no status for a ref",
		refs:     []gatewayv1.ParentReference{serviceParent("web", 0)},
		computed: nil,
		want:     []int{-1},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := matchParents("ns", tc.refs, tc.computed); !slices.Equal(got, tc.want) {
				t.Errorf("matchParents = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestOwnParentsKeepsTransitionTimes(t *testing.T) {
	ctrl := gatewayv1.GatewayController(controller)
	refs := []gatewayv1.ParentReference{gatewayParent("gw"), serviceParent("web", 80)}
	rs := &collections.RouteStatus{Kind: collections.KindHTTPRoute, Namespace: "ns", Name: "r", Generation: 3,
		Parents: []collections.ParentStatus{{Service: "ns/web", Port: 80, Conditions: []collections.Condition{
			{Type: collections.ConditionAccepted, Status: true, Reason: collections.ReasonAccepted, Message: "ok"},
			{Type: collections.ConditionResolvedRefs, Status: false, Reason: collections.ReasonBackendNotFound, Message: "gone"},
		}}}}
	then := metav1.NewTime(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC))
	now := metav1.NewTime(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC))
	prev := []gatewayv1.RouteParentStatus{{ParentRef: serviceParent("web", 80), ControllerName: ctrl, Conditions: []metav1.Condition{
		{Type: collections.ConditionAccepted, Status: metav1.ConditionTrue, Reason: "Accepted", ObservedGeneration: 2, LastTransitionTime: then},
		{Type: collections.ConditionResolvedRefs, Status: metav1.ConditionTrue, Reason: "ResolvedRefs", ObservedGeneration: 2, LastTransitionTime: then},
	}}}
	got := ownParents(ctrl, "ns", refs, rs, prev, now)
	if len(got) != 1 {
		t.Fatalf("got %d entries, want 1 (the Service parent): %+v", len(got), got)
	}
	p := got[0]
	if !equality.Semantic.DeepEqual(p.ParentRef, refs[1]) || p.ControllerName != ctrl {
		t.Errorf("entry = %+v, want parentRef %+v of %s", p, refs[1], ctrl)
	}
	want := []metav1.Condition{
		{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", Message: "ok", ObservedGeneration: 3, LastTransitionTime: then},
		{Type: "ResolvedRefs", Status: metav1.ConditionFalse, Reason: "BackendNotFound", Message: "gone", ObservedGeneration: 3, LastTransitionTime: now},
	}
	if !equality.Semantic.DeepEqual(p.Conditions, want) {
		t.Errorf("conditions = %+v\nwant %+v", p.Conditions, want)
	}
	// Computing again from what was just computed changes nothing.
	again := ownParents(ctrl, "ns", refs, rs, got, metav1.NewTime(now.Add(time.Hour)))
	if !equality.Semantic.DeepEqual(again, got) {
		t.Errorf("recomputed entries differ:\n%+v\n%+v", again, got)
	}
	if ownParents(ctrl, "ns", refs, nil, prev, now) != nil {
		t.Error("a route without computed status wants entries")
	}
}

func TestMerge(t *testing.T) {
	ctrl := gatewayv1.GatewayController(controller)
	theirs := gatewayv1.RouteParentStatus{ParentRef: gatewayParent("gw"), ControllerName: "example.com/gw",
		Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted"}}}
	mine := func(svc string) gatewayv1.RouteParentStatus {
		return gatewayv1.RouteParentStatus{ParentRef: serviceParent(svc, 0), ControllerName: ctrl,
			Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted"}}}
	}
	current := []gatewayv1.RouteParentStatus{mine("old"), theirs, mine("web")}

	if _, changed := merge(ctrl, current, []gatewayv1.RouteParentStatus{mine("old"), mine("web")}); changed {
		t.Error("same entries reported as changed")
	}
	got, changed := merge(ctrl, current, []gatewayv1.RouteParentStatus{mine("web")})
	if !changed || !equality.Semantic.DeepEqual(got, []gatewayv1.RouteParentStatus{theirs, mine("web")}) {
		t.Errorf("merge dropping old = %v, %+v", changed, got)
	}
	got, changed = merge(ctrl, current, nil)
	if !changed || !equality.Semantic.DeepEqual(got, []gatewayv1.RouteParentStatus{theirs}) {
		t.Errorf("merge removing ours = %v, %+v", changed, got)
	}
	// The API requires status.parents: removing the last entry writes an
	// empty list, not null.
	got, changed = merge(ctrl, []gatewayv1.RouteParentStatus{mine("web")}, nil)
	if !changed || got == nil || len(got) != 0 {
		t.Errorf("merge removing the only entry = %v, %#v; want an empty non-nil list", changed, got)
	}
	if _, changed := merge(ctrl, []gatewayv1.RouteParentStatus{theirs}, nil); changed {
		t.Error("nothing of ours, nothing wanted: reported as changed")
	}
}

func TestTruncate(t *testing.T) {
	if got := truncate("héllo", 2); got != "h" {
		t.Errorf("truncate inside a rune = %q, want %q", got, "h")
	}
	if got := truncate("abc", 5); got != "abc" {
		t.Errorf("truncate short = %q", got)
	}
}
