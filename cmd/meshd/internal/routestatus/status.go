package routestatus

import (
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshd/meshd/collections"
)

// maxMessage is the longest condition message the API server accepts.
const maxMessage = 32768

// isServiceParent reports whether a parentRef names a core Service, as the
// mesh model reads it: group "" or "core" and kind Service (an absent kind
// means Gateway).
func isServiceParent(ref gatewayv1.ParentReference) bool {
	g := ""
	if ref.Group != nil {
		g = string(*ref.Group)
	}
	k := "Gateway"
	if ref.Kind != nil {
		k = string(*ref.Kind)
	}
	return (g == "" || g == "core") && k == "Service"
}

// parentName returns the "namespace/name" a parentRef names; its namespace
// defaults to the route's.
func parentName(routeNS string, ref gatewayv1.ParentReference) string {
	ns := routeNS
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	return ns + "/" + string(ref.Name)
}

// portFits reports whether a computed parent port can belong to ref: the
// model reports the port a ref restricts the route to (its port, or the
// port its sectionName resolves to), 0 when it names none, and also 0 when
// the service or port was not found.
func portFits(port int32, ref gatewayv1.ParentReference) bool {
	switch {
	case ref.Port != nil:
		return port == *ref.Port || port == 0
	case ref.SectionName != nil:
		return true
	default:
		return port == 0
	}
}

// matchParents returns, for each parentRef, the index of its status in
// computed, or -1 (not a Service parent, or no status for it).
//
// The model emits one status per Service parentRef in spec order, except
// that a ref resolving to the same service port as an earlier one (say
// port 80 and the sectionName of port 80) is reported once. Without such
// duplicates the two lists pair up in order. With them, a ref that does not
// fit the next status takes the earlier one it duplicates.
func matchParents(routeNS string, refs []gatewayv1.ParentReference, computed []collections.ParentStatus) []int {
	idx := make([]int, len(refs))
	var svc []int
	for i, ref := range refs {
		idx[i] = -1
		if isServiceParent(ref) {
			svc = append(svc, i)
		}
	}
	next := 0
	for _, i := range svc {
		name := parentName(routeNS, refs[i])
		if next < len(computed) && computed[next].Service == name && portFits(computed[next].Port, refs[i]) {
			idx[i] = next
			next++
			continue
		}
		for k := range next {
			if computed[k].Service == name && portFits(computed[k].Port, refs[i]) {
				idx[i] = k
				break
			}
		}
	}
	return idx
}

// ownParents returns the status.parents entries the controller wants for a
// route in namespace routeNS with the given parentRefs and computed status
// (nil: none). A condition whose status is the same as in the controller's
// current entry for the same parentRef (in prev) keeps its
// lastTransitionTime; others take now.
func ownParents(controller gatewayv1.GatewayController, routeNS string, refs []gatewayv1.ParentReference,
	rs *collections.RouteStatus, prev []gatewayv1.RouteParentStatus, now metav1.Time) []gatewayv1.RouteParentStatus {
	if rs == nil {
		return nil
	}
	var out []gatewayv1.RouteParentStatus
	for i, j := range matchParents(routeNS, refs, rs.Parents) {
		if j < 0 {
			continue
		}
		var prevConds []metav1.Condition
		for _, p := range prev {
			if equality.Semantic.DeepEqual(p.ParentRef, refs[i]) {
				prevConds = p.Conditions
				break
			}
		}
		ps := rs.Parents[j]
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
			ParentRef:      *refs[i].DeepCopy(),
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
