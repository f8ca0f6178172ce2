package policystatus

import (
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"
	metav1alpha1 "istio.io/api/meta/v1alpha1"
	securityv1 "istio.io/client-go/pkg/apis/security/v1"
	istioclient "istio.io/client-go/pkg/clientset/versioned"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshd/meshd/cmd/meshd/internal/statuswriter"
	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/krt"
)

// ConditionType is the type of the condition the writer owns.
const ConditionType = "meshd.io/Supported"

// The condition's reasons.
const (
	ReasonSupported   = "Supported"
	ReasonUnsupported = "UnsupportedFields"
)

// Kinds, the first part of the writer's keys.
const (
	KindPeerAuthentication  = "PeerAuthentication"
	KindAuthorizationPolicy = "AuthorizationPolicy"
)

// Policies are the cluster's policy collections, keyed "namespace/name".
// A nil collection is not written to.
type Policies struct {
	PeerAuthentications   krt.Collection[*securityv1.PeerAuthentication]
	AuthorizationPolicies krt.Collection[*securityv1.AuthorizationPolicy]
}

// New returns a writer of the condition to the policies of p, from the
// model's view of them in mesh, through client. It starts nothing; its
// Run does.
func New(client istioclient.Interface, mesh *collections.Model, p Policies, opts statuswriter.Options) *statuswriter.Writer {
	var kinds []statuswriter.Target
	triggers := []statuswriter.Trigger{}
	if p.PeerAuthentications != nil {
		view := func(key string) (collections.PolicyScope, []string, bool) {
			v, ok := mesh.PeerAuthentications.Get(key)
			return v.PolicyScope, v.Problems, ok
		}
		kinds = append(kinds, policyKind(KindPeerAuthentication, p.PeerAuthentications, view,
			func(pa *securityv1.PeerAuthentication) *metav1alpha1.IstioStatus { return &pa.Status },
			(*securityv1.PeerAuthentication).DeepCopy,
			func(ns string) statuswriter.StatusClient[*securityv1.PeerAuthentication] {
				return client.SecurityV1().PeerAuthentications(ns)
			}))
		triggers = append(triggers, statuswriter.Keys(mesh.PeerAuthentications, KindPeerAuthentication+"/"))
	}
	if p.AuthorizationPolicies != nil {
		view := func(key string) (collections.PolicyScope, []string, bool) {
			v, ok := mesh.AuthorizationPolicies.Get(key)
			return v.PolicyScope, v.Problems, ok
		}
		kinds = append(kinds, policyKind(KindAuthorizationPolicy, p.AuthorizationPolicies, view,
			func(ap *securityv1.AuthorizationPolicy) *metav1alpha1.IstioStatus { return &ap.Status },
			(*securityv1.AuthorizationPolicy).DeepCopy,
			func(ns string) statuswriter.StatusClient[*securityv1.AuthorizationPolicy] {
				return client.SecurityV1().AuthorizationPolicies(ns)
			}))
		triggers = append(triggers, statuswriter.Keys(mesh.AuthorizationPolicies, KindAuthorizationPolicy+"/"))
	}
	return statuswriter.New(opts, triggers, kinds...)
}

// policyKind describes one policy type to the status writer. view returns
// the model's view of a policy by key: its scope (with the generation it
// was computed from) and its problems; client, the policy type's client
// in a namespace.
func policyKind[T metav1.Object](kind string, policies krt.Collection[T],
	view func(key string) (collections.PolicyScope, []string, bool),
	status func(T) *metav1alpha1.IstioStatus, copyOf func(T) T,
	client func(ns string) statuswriter.StatusClient[T]) *statuswriter.Kind[T] {
	get, update := statuswriter.Through(client)
	return &statuswriter.Kind[T]{
		Name:     kind,
		Objects:  policies,
		Relevant: func(T) bool { return true },
		Desired: func(p T) (T, statuswriter.Outcome) {
			scope, problems, ok := view(p.GetNamespace() + "/" + p.GetName())
			switch {
			case !ok:
				return p, statuswriter.Unchanged
			case scope.Generation != p.GetGeneration():
				return p, statuswriter.Stale
			}
			want := condition(problems, p.GetGeneration())
			conds, changed := withCondition(status(p).GetConditions(), want)
			if !changed {
				return p, statuswriter.Unchanged
			}
			cp := copyOf(p)
			status(cp).Conditions = conds
			return cp, statuswriter.Write
		},
		Get:    get,
		Update: update,
	}
}

// condition is the condition a policy with problems (none: all applied)
// of generation gen should carry.
func condition(problems []string, gen int64) *metav1alpha1.IstioCondition {
	c := &metav1alpha1.IstioCondition{Type: ConditionType, ObservedGeneration: gen,
		Status: "True", Reason: ReasonSupported, Message: "meshd applies every field of the policy"}
	if len(problems) > 0 {
		c.Status, c.Reason = "False", ReasonUnsupported
		c.Message = "applied fail-closed: " + strings.Join(problems, "; ")
	}
	return c
}

// withCondition returns conds with want in place of the condition of its
// type, and whether that differs. The old condition's transition time is
// kept while its status stays the same.
func withCondition(conds []*metav1alpha1.IstioCondition, want *metav1alpha1.IstioCondition) ([]*metav1alpha1.IstioCondition, bool) {
	out := make([]*metav1alpha1.IstioCondition, 0, len(conds)+1)
	found := false
	for _, c := range conds {
		if c.GetType() != want.Type {
			out = append(out, c)
			continue
		}
		found = true
		if c.GetStatus() == want.Status && c.GetReason() == want.Reason && c.GetMessage() == want.Message &&
			c.GetObservedGeneration() == want.ObservedGeneration {
			return conds, false
		}
		if c.GetStatus() == want.Status {
			want.LastTransitionTime = c.GetLastTransitionTime()
		}
	}
	if !found || want.LastTransitionTime == nil {
		// The server keeps seconds: a finer time would read back different.
		want.LastTransitionTime = timestamppb.New(time.Now().Truncate(time.Second))
	}
	return append(out, want), true
}
