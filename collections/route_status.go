package collections

import gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

// Route condition types and reasons, as in the Gateway API.
const (
	ConditionAccepted     = "Accepted"
	ConditionResolvedRefs = "ResolvedRefs"

	ReasonAccepted         = "Accepted"
	ReasonNoMatchingParent = "NoMatchingParent"
	ReasonUnsupportedValue = "UnsupportedValue"
	ReasonResolvedRefs     = "ResolvedRefs"
	ReasonBackendNotFound  = "BackendNotFound"
	ReasonInvalidKind      = "InvalidKind"
	ReasonRefNotPermitted  = "RefNotPermitted"
)

// Condition is one status condition of a route for one parent.
type Condition struct {
	Type    string
	Status  bool
	Reason  string
	Message string
}

// ParentStatus is the status of a route for one Service parentRef. A route
// has one per Service parentRef, in spec order, also for a ref that names
// the same service port as an earlier one (a port and the section name of
// that port), which binds nothing more.
type ParentStatus struct {
	// Ref is the parentRef as the route's spec gives it: what a status
	// entry names.
	Ref gatewayv1.ParentReference
	// Service is the parent, "namespace/name".
	Service string
	// Port is the parent port, 0 for all ports.
	Port       int32
	Conditions []Condition
}

// Accepted reports whether the route is accepted for this parent and all
// its references resolved.
func (p ParentStatus) Accepted() bool {
	for _, c := range p.Conditions {
		if !c.Status {
			return false
		}
	}
	return len(p.Conditions) > 0
}

// InEffect reports whether the route applies to traffic for this parent:
// its Accepted condition holds. References that do not resolve
// (ResolvedRefs false) leave the route in effect; the share of traffic
// they would have received fails (WeightedBackend.Unresolved).
func (p ParentStatus) InEffect() bool {
	for _, c := range p.Conditions {
		if c.Type == ConditionAccepted {
			return c.Status
		}
	}
	return false
}

// RouteStatus is the status of one HTTPRoute or GRPCRoute that has Service
// parents, with one ParentStatus per Service parentRef. A route that is
// not accepted for a parent is skipped for it: traffic to the service
// takes its default route. A route whose references do not all resolve
// stays in effect, and the requests meant for an unresolved backend fail.
type RouteStatus struct {
	Kind       string
	Namespace  string
	Name       string
	Generation int64
	Parents    []ParentStatus
}

// ResourceName returns "Kind/namespace/name".
func (s RouteStatus) ResourceName() string { return RouteKey(s.Kind, s.Namespace, s.Name) }

// GetNamespace returns the route's namespace.
func (s RouteStatus) GetNamespace() string { return s.Namespace }

// routeError is a problem found while compiling a route, with the
// condition reason it reports.
type routeError struct {
	reason string
	msg    string
}

func (e *routeError) Error() string { return e.msg }
