package routestatus

import (
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

// TestOwnParentsOnePerRef: the writer owns one entry per parentRef the
// model reports, in its order and named as written, a ref given twice
// once; a port and a section name of the same port are two refs.
func TestOwnParentsOnePerRef(t *testing.T) {
	ctrl := gatewayv1.GatewayController(controller)
	other := gatewayv1.Namespace("other")
	crossNS := serviceParent("db", 0)
	crossNS.Namespace = &other
	accepted := []collections.Condition{{Type: collections.ConditionAccepted, Status: true, Reason: collections.ReasonAccepted}}
	refs := []gatewayv1.ParentReference{serviceParent("web", 80), sectionParent("web", "http"), crossNS, serviceParent("web", 80)}
	rs := &collections.RouteStatus{Generation: 1}
	for _, r := range refs {
		rs.Parents = append(rs.Parents, collections.ParentStatus{Ref: r, Conditions: accepted})
	}
	got := ownParents(ctrl, rs, nil, metav1.Now())
	var gotRefs []gatewayv1.ParentReference
	for _, p := range got {
		gotRefs = append(gotRefs, p.ParentRef)
	}
	if !equality.Semantic.DeepEqual(gotRefs, refs[:3]) {
		t.Errorf("entries name %+v, want %+v", gotRefs, refs[:3])
	}
}

func TestOwnParentsKeepsTransitionTimes(t *testing.T) {
	ctrl := gatewayv1.GatewayController(controller)
	rs := &collections.RouteStatus{Kind: collections.KindHTTPRoute, Namespace: "ns", Name: "r", Generation: 3,
		Parents: []collections.ParentStatus{{Ref: serviceParent("web", 80), Service: "ns/web", Port: 80, Conditions: []collections.Condition{
			{Type: collections.ConditionAccepted, Status: true, Reason: collections.ReasonAccepted, Message: "ok"},
			{Type: collections.ConditionResolvedRefs, Status: false, Reason: collections.ReasonBackendNotFound, Message: "gone"},
		}}}}
	then := metav1.NewTime(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC))
	now := metav1.NewTime(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC))
	prev := []gatewayv1.RouteParentStatus{{ParentRef: serviceParent("web", 80), ControllerName: ctrl, Conditions: []metav1.Condition{
		{Type: collections.ConditionAccepted, Status: metav1.ConditionTrue, Reason: "Accepted", ObservedGeneration: 2, LastTransitionTime: then},
		{Type: collections.ConditionResolvedRefs, Status: metav1.ConditionTrue, Reason: "ResolvedRefs", ObservedGeneration: 2, LastTransitionTime: then},
	}}}
	got := ownParents(ctrl, rs, prev, now)
	if len(got) != 1 {
		t.Fatalf("got %d entries, want 1 (the Service parent): %+v", len(got), got)
	}
	p := got[0]
	if !equality.Semantic.DeepEqual(p.ParentRef, serviceParent("web", 80)) || p.ControllerName != ctrl {
		t.Errorf("entry = %+v, want parentRef %+v of %s", p, serviceParent("web", 80), ctrl)
	}
	want := []metav1.Condition{
		{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", Message: "ok", ObservedGeneration: 3, LastTransitionTime: then},
		{Type: "ResolvedRefs", Status: metav1.ConditionFalse, Reason: "BackendNotFound", Message: "gone", ObservedGeneration: 3, LastTransitionTime: now},
	}
	if !equality.Semantic.DeepEqual(p.Conditions, want) {
		t.Errorf("conditions = %+v\nwant %+v", p.Conditions, want)
	}
	// Computing again from what was just computed changes nothing.
	again := ownParents(ctrl, rs, got, metav1.NewTime(now.Add(time.Hour)))
	if !equality.Semantic.DeepEqual(again, got) {
		t.Errorf("recomputed entries differ:\n%+v\n%+v", again, got)
	}
	if ownParents(ctrl, nil, prev, now) != nil {
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
