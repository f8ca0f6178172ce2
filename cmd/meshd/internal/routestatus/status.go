package routestatus

import (
	"slices"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshd/meshd/collections"
)

// maxMessage is the longest condition message the API server accepts.
const maxMessage = 32768

// ownParents returns the status.parents entries the controller wants for a
// route with the computed status rs (nil: none): one per Service parentRef,
// which the model reports in spec order with the ref itself. A condition
// whose status is the same as in the controller's current entry for the
// same parentRef (in prev) keeps its lastTransitionTime; others take now.
func ownParents(controller gatewayv1.GatewayController, rs *collections.RouteStatus,
	prev []gatewayv1.RouteParentStatus, now metav1.Time) []gatewayv1.RouteParentStatus {
	if rs == nil {
		return nil
	}
	var out []gatewayv1.RouteParentStatus
	for _, ps := range rs.Parents {
		if slices.ContainsFunc(out, func(p gatewayv1.RouteParentStatus) bool { return equality.Semantic.DeepEqual(p.ParentRef, ps.Ref) }) {
			// A ref given twice (possible outside a cluster's validation)
			// gets one entry.
			continue
		}
		var prevConds []metav1.Condition
		for _, p := range prev {
			if equality.Semantic.DeepEqual(p.ParentRef, ps.Ref) {
				prevConds = p.Conditions
				break
			}
		}
		conds := make([]metav1.Condition, 0, len(ps.Conditions))
		for _, c := range ps.Conditions {
			mc := metav1.Condition{
				Type:               c.Type,
				Status:             metav1.ConditionFalse,
				Reason:             c.Reason,
				Message:            truncate(c.Message, maxMessage),
				ObservedGeneration: rs.Generation,
				LastTransitionTime: now,
			}
			if c.Status {
				mc.Status = metav1.ConditionTrue
			}
			if old := meta.FindStatusCondition(prevConds, c.Type); old != nil && old.Status == mc.Status {
				mc.LastTransitionTime = old.LastTransitionTime
			}
			conds = append(conds, mc)
		}
		out = append(out, gatewayv1.RouteParentStatus{
			ParentRef:      *ps.Ref.DeepCopy(),
			ControllerName: controller,
			Conditions:     conds,
		})
	}
	return out
}

// owned returns the entries of parents that belong to controller.
func owned(controller gatewayv1.GatewayController, parents []gatewayv1.RouteParentStatus) []gatewayv1.RouteParentStatus {
	var out []gatewayv1.RouteParentStatus
	for _, p := range parents {
		if p.ControllerName == controller {
			out = append(out, p)
		}
	}
	return out
}

// merge returns current with the controller's entries replaced by want:
// other controllers' entries keep their order and come first. changed
// reports whether the controller's entries differ from want.
func merge(controller gatewayv1.GatewayController, current, want []gatewayv1.RouteParentStatus) (merged []gatewayv1.RouteParentStatus, changed bool) {
	have := owned(controller, current)
	if len(have) == len(want) && (len(want) == 0 || equality.Semantic.DeepEqual(have, want)) {
		return current, false
	}
	merged = make([]gatewayv1.RouteParentStatus, 0, len(current)-len(have)+len(want))
	for _, p := range current {
		if p.ControllerName != controller {
			merged = append(merged, p)
		}
	}
	return append(merged, want...), true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut before a rune, not inside one.
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
