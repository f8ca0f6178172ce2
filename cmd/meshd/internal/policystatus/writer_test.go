package policystatus

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1alpha1 "istio.io/api/meta/v1alpha1"
	securityv1beta1 "istio.io/api/security/v1beta1"
	securityv1 "istio.io/client-go/pkg/apis/security/v1"
	istioclient "istio.io/client-go/pkg/clientset/versioned"
	typedsecurityv1 "istio.io/client-go/pkg/clientset/versioned/typed/security/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshd/meshd/cmd/meshd/internal/statuswriter"
	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources/kube"
)

// startWriter runs a graph, a kube source of a new namespace, the mesh
// model and a policy status writer until the test ends. It returns the
// namespace, the Istio client and the writer.
func startWriter(t *testing.T) (string, istioclient.Interface, *statuswriter.Writer) {
	t.Helper()
	clients, err := kube.ClientsForConfig(apiServer.Env(t).Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := fmt.Sprintf("ps%d", time.Now().UnixNano()%1_000_000)
	if _, err := clients.Kube.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	g := krt.NewGraph()
	src := kube.New(g, clients, kube.WithDefaultWatch(kube.Watch{Namespace: ns}))
	in := src.Inputs()
	w := New(clients.Istio, collections.Build(g, in), Policies{in.PeerAuthentications, in.AuthorizationPolicies}, statuswriter.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = g.Run(ctx) })
	wg.Go(func() { _ = src.Run(ctx) })
	wg.Go(func() { w.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return ns, clients.Istio, w
}

// ours returns the writer's condition of a status, nil if there is none.
func ours(st *metav1alpha1.IstioStatus) *metav1alpha1.IstioCondition {
	for _, c := range st.GetConditions() {
		if c.GetType() == ConditionType {
			return c
		}
	}
	return nil
}

// waitCondition waits until the named policy's condition satisfies ok.
func waitCondition(t *testing.T, what string, get func() (*metav1alpha1.IstioStatus, int64), ok func(c *metav1alpha1.IstioCondition, gen int64) bool) *metav1alpha1.IstioStatus {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, gen := get()
		if c := ours(st); c != nil && ok(c, gen) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: status %v", what, st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// createByIP creates the AuthorizationPolicy by-ip, whose ipBlocks meshd
// does not support, with another controller's condition in its status.
func createByIP(t *testing.T, aps typedsecurityv1.AuthorizationPolicyInterface, ns string) *securityv1.AuthorizationPolicy {
	t.Helper()
	ap := &securityv1.AuthorizationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "by-ip", Namespace: ns}}
	ap.Spec.Rules = []*securityv1beta1.Rule{{From: []*securityv1beta1.Rule_From{{Source: &securityv1beta1.Source{IpBlocks: []string{"10.0.0.0/8"}}}}}}
	created, err := aps.Create(t.Context(), ap, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status.Conditions = []*metav1alpha1.IstioCondition{{Type: "Reconciled", Status: "True", Reason: "Other"}}
	if created, err = aps.UpdateStatus(t.Context(), created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return created
}

// TestPolicyConditions: a PeerAuthentication meshd applies in full is
// Supported; an AuthorizationPolicy with a field meshd does not support is
// not, with the field named, until the field goes; conditions of others
// stay.
func TestPolicyConditions(t *testing.T) {
	ns, ic, w := startWriter(t)
	pa := &securityv1.PeerAuthentication{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}
	pa.Spec.Mtls = &securityv1beta1.PeerAuthentication_MutualTLS{Mode: securityv1beta1.PeerAuthentication_MutualTLS_STRICT}
	if _, err := ic.SecurityV1().PeerAuthentications(ns).Create(t.Context(), pa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	aps := ic.SecurityV1().AuthorizationPolicies(ns)
	created := createByIP(t, aps, ns)

	getPA := func() (*metav1alpha1.IstioStatus, int64) {
		p, err := ic.SecurityV1().PeerAuthentications(ns).Get(t.Context(), "default", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return &p.Status, p.Generation
	}
	waitCondition(t, "PeerAuthentication Supported", getPA, func(c *metav1alpha1.IstioCondition, gen int64) bool {
		return c.Status == "True" && c.Reason == ReasonSupported && c.ObservedGeneration == gen && c.LastTransitionTime != nil
	})

	getAP := func() (*metav1alpha1.IstioStatus, int64) {
		p, err := aps.Get(t.Context(), "by-ip", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return &p.Status, p.Generation
	}
	st := waitCondition(t, "AuthorizationPolicy UnsupportedFields", getAP, func(c *metav1alpha1.IstioCondition, gen int64) bool {
		return c.Status == "False" && c.Reason == ReasonUnsupported && c.ObservedGeneration == gen &&
			strings.Contains(c.Message, "ipBlocks") && strings.Contains(c.Message, "fail-closed")
	})
	if len(st.GetConditions()) != 2 || st.GetConditions()[0].GetType() != "Reconciled" {
		t.Errorf("conditions = %v, want the other controller's Reconciled kept first", st.GetConditions())
	}

	cur, err := aps.Get(t.Context(), "by-ip", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.Rules = []*securityv1beta1.Rule{{From: []*securityv1beta1.Rule_From{{Source: &securityv1beta1.Source{Namespaces: []string{"shop"}}}}}}
	if _, err := aps.Update(t.Context(), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, "AuthorizationPolicy Supported once fixed", getAP, func(c *metav1alpha1.IstioCondition, gen int64) bool {
		return c.Status == "True" && c.Reason == ReasonSupported && c.ObservedGeneration == gen && gen > created.Generation
	})
	if s := w.Stats(); s.Written < 3 || s.Errors != 0 {
		t.Errorf("stats = %+v, want at least 3 writes and no error", s)
	}
}
