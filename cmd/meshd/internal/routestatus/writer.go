package routestatus

import (
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/meshd/meshd/cmd/meshd/internal/statuswriter"
	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/krt"
)

// Options configure a Writer.
type Options struct {
	// ControllerName is written as status.parents[].controllerName and
	// marks the entries the writer owns, e.g. "meshd.io/mesh-controller".
	// Required.
	ControllerName string
	// QPS and Burst bound the rate of status writes with a token bucket
	// shared by every route. Deciding that a route needs no write takes no
	// token. Defaults: 10 and 20.
	QPS   float64
	Burst int
	// Logger receives failed writes, with the route key and the error,
	// and each write at debug level. Default: discard.
	Logger *slog.Logger
}

// Routes are the route collections the statuses were computed from, keyed
// "namespace/name" as the sources key them. The writer reads each route's
// spec and current status from them, so a route whose status is already
// right costs no API call. A nil collection is not written to.
type Routes struct {
	HTTP krt.Collection[*gatewayv1.HTTPRoute]
	GRPC krt.Collection[*gatewayv1.GRPCRoute]
}

// Stats are a Writer's counters since New, over all its Runs.
type Stats = statuswriter.Stats

// Failure is a route whose status the writer last failed to write; its
// Key is "Kind/namespace/name".
type Failure = statuswriter.Failure

// Writer writes route status for one controller name. Create it with
// New; it writes only while Run runs (see statuswriter.Writer).
type Writer struct {
	*statuswriter.Writer
}

// New returns a writer of the statuses in statuses to the routes of
// routes, through client. It starts nothing; Run does. It panics when
// opts.ControllerName is empty.
func New(client gatewayclient.Interface, statuses krt.Collection[collections.RouteStatus], routes Routes, opts Options) *Writer {
	if opts.ControllerName == "" {
		panic("routestatus: Options.ControllerName is required")
	}
	r := &routeWriter{statuses: statuses, controller: gatewayv1.GatewayController(opts.ControllerName)}
	var kinds []statuswriter.Target
	if routes.HTTP != nil {
		kinds = append(kinds, routeKind(r, collections.KindHTTPRoute, routes.HTTP,
			func(rt *gatewayv1.HTTPRoute) (*gatewayv1.RouteStatus, []gatewayv1.ParentReference) {
				return &rt.Status.RouteStatus, rt.Spec.ParentRefs
			}, (*gatewayv1.HTTPRoute).DeepCopy,
			func(ns string) statuswriter.StatusClient[*gatewayv1.HTTPRoute] {
				return client.GatewayV1().HTTPRoutes(ns)
			}))
	}
	if routes.GRPC != nil {
		kinds = append(kinds, routeKind(r, collections.KindGRPCRoute, routes.GRPC,
			func(rt *gatewayv1.GRPCRoute) (*gatewayv1.RouteStatus, []gatewayv1.ParentReference) {
				return &rt.Status.RouteStatus, rt.Spec.ParentRefs
			}, (*gatewayv1.GRPCRoute).DeepCopy,
			func(ns string) statuswriter.StatusClient[*gatewayv1.GRPCRoute] {
				return client.GatewayV1().GRPCRoutes(ns)
			}))
	}
	triggers := []statuswriter.Trigger{statuswriter.Keys(statuses, "")}
	return &Writer{statuswriter.New(statuswriter.Options{QPS: opts.QPS, Burst: opts.Burst, Logger: opts.Logger}, triggers, kinds...)}
}

// routeWriter is what every route kind shares: the computed statuses and
// the controller name.
type routeWriter struct {
	statuses   krt.Collection[collections.RouteStatus]
	controller gatewayv1.GatewayController
}

// routeKind describes one route type to the status writer. parts returns
// a route's status (pointing into it) and its parentRefs; api, the route
// type's client in a namespace.
func routeKind[T metav1.Object](r *routeWriter, kind string, routes krt.Collection[T],
	parts func(T) (*gatewayv1.RouteStatus, []gatewayv1.ParentReference), copyOf func(T) T,
	api func(ns string) statuswriter.StatusClient[T]) *statuswriter.Kind[T] {
	get, update := statuswriter.Through(api)
	return &statuswriter.Kind[T]{
		Name:    kind,
		Objects: routes,
		Relevant: func(rt T) bool {
			st, refs := parts(rt)
			return collections.HasServiceParent(refs) || len(owned(r.controller, st.Parents)) > 0
		},
		Desired: func(rt T) (T, statuswriter.Outcome) {
			rs := r.status(kind + "/" + rt.GetNamespace() + "/" + rt.GetName())
			if rs != nil && rs.Generation != rt.GetGeneration() {
				return rt, statuswriter.Stale
			}
			st, _ := parts(rt)
			want, changed := r.desired(rs, st.Parents)
			if !changed {
				return rt, statuswriter.Unchanged
			}
			cp := copyOf(rt)
			st, _ = parts(cp)
			st.Parents = want
			return cp, statuswriter.Write
		},
		Get:    get,
		Update: update,
	}
}

// status returns the computed status of a route, nil when it has none.
func (r *routeWriter) status(key string) *collections.RouteStatus {
	if rs, ok := r.statuses.Get(key); ok {
		return &rs
	}
	return nil
}

// desired returns current with the controller's entries replaced by those
// rs calls for, and whether they differ.
func (r *routeWriter) desired(rs *collections.RouteStatus, current []gatewayv1.RouteParentStatus) ([]gatewayv1.RouteParentStatus, bool) {
	// The server keeps seconds: a finer time would read back different.
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	ours := ownParents(r.controller, rs, owned(r.controller, current), now)
	return merge(r.controller, current, ours)
}
