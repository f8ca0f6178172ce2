package policystatus

import (
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"
	metav1alpha1 "istio.io/api/meta/v1alpha1"
)

// TestWithCondition: the condition replaces the writer's own only when it
// differs, keeps its transition time while its status holds, and leaves
// other conditions as they are.
func TestWithCondition(t *testing.T) {
	then := timestamppb.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	other := &metav1alpha1.IstioCondition{Type: "Reconciled", Status: "True"}
	supported := func(gen int64) *metav1alpha1.IstioCondition {
		c := condition(nil, gen)
		c.LastTransitionTime = then
		return c
	}
	if _, changed := withCondition([]*metav1alpha1.IstioCondition{other, supported(1)}, condition(nil, 1)); changed {
		t.Error("the same condition again: changed, want unchanged")
	}
	got, changed := withCondition([]*metav1alpha1.IstioCondition{other, supported(1)}, condition(nil, 2))
	if !changed || len(got) != 2 || got[0] != other || got[1].ObservedGeneration != 2 || !got[1].LastTransitionTime.AsTime().Equal(then.AsTime()) {
		t.Errorf("a new generation, still supported: %v, changed %v; want generation 2 and the old transition time", got, changed)
	}
	got, changed = withCondition([]*metav1alpha1.IstioCondition{supported(1)}, condition([]string{"spec.x: not supported"}, 2))
	if !changed || len(got) != 1 || got[0].Status != "False" || got[0].LastTransitionTime.AsTime().Equal(then.AsTime()) {
		t.Errorf("now unsupported: %v, changed %v; want False with a new transition time", got, changed)
	}
	got, changed = withCondition(nil, condition(nil, 1))
	if !changed || len(got) != 1 || got[0].LastTransitionTime == nil {
		t.Errorf("first condition: %v, changed %v; want one with a transition time", got, changed)
	}
}
