package collections

import (
	"maps"
	"slices"
	"strings"

	"github.com/meshd/meshd/krt"
)

// peerView is what the clients' view of a workload (clientView) depends
// on: the workload's namespace, service account and labels.
type peerView struct {
	key            string
	Namespace      string
	ServiceAccount string
	Labels         map[string]string
}

func (w Workload) peerView() peerView {
	return peerView{key: w.ResourceName(), Namespace: w.Namespace, ServiceAccount: w.ServiceAccount, Labels: w.Labels}
}

// Equals reports whether v and o are the same.
func (v peerView) Equals(o peerView) bool {
	return v.key == o.key && v.ServiceAccount == o.ServiceAccount && v.sameClass(o)
}

// sameClass reports whether the same policies apply to v and o, whatever
// the policies: they have the same namespace and labels.
func (v peerView) sameClass(o peerView) bool {
	return v.Namespace == o.Namespace && maps.Equal(v.Labels, o.Labels)
}

// classKey returns a key equal for the views of one class only.
func (v peerView) classKey() string {
	var b strings.Builder
	b.WriteString(v.Namespace)
	for _, k := range slices.Sorted(maps.Keys(v.Labels)) {
		b.WriteByte(0)
		b.WriteString(k)
		b.WriteByte(1)
		b.WriteString(v.Labels[k])
	}
	return b.String()
}

// peerClasses resolves, within one computation, the clientView of
// workloads, reading the policies once per class: the pods of a
// deployment share their namespace and labels, so the policies are read
// once for them all rather than once per pod. The modes of a class are
// shared; like every item, they are read-only.
type peerClasses struct {
	ctx      krt.HandlerContext
	applying applyingPolicies
	mesh     meshSecurity
	// namespaces holds the namespace-wide policies read, by namespace.
	namespaces map[string][]securityPolicy
	// last is the previous workload, its modes and its SPIFFE ID.
	last     peerView
	lastView clientView
	seen     bool
	byClass  map[string]WorkloadMTLS
}

// newPeerClasses reads the mesh-wide part of what applies to every
// workload.
func newPeerClasses(ctx krt.HandlerContext, applying applyingPolicies) *peerClasses {
	return &peerClasses{ctx: ctx, applying: applying, mesh: applying.fetchMeshPeers(ctx)}
}

// view returns the clientView of w, equal to that of its WorkloadSecurity.
func (c *peerClasses) view(w peerView) clientView {
	// Endpoints come in key order, so a deployment's pods mostly follow
	// one another: comparing with the last costs no key.
	if !c.seen || !c.last.sameClass(w) {
		key := w.classKey()
		mtls, ok := c.byClass[key]
		if !ok {
			mtls = c.resolve(w)
			if c.byClass == nil {
				c.byClass = map[string]WorkloadMTLS{}
			}
			c.byClass[key] = mtls
		}
		c.lastView.MTLS = mtls
	}
	if !c.seen || c.last.Namespace != w.Namespace || c.last.ServiceAccount != w.ServiceAccount {
		c.lastView.SPIFFEID, _ = SPIFFEID(c.mesh.TrustDomain, w.Namespace, w.ServiceAccount)
	}
	c.last, c.seen = w, true
	return c.lastView
}

// resolve reads the policies that apply to w's class and derives its
// modes, as workloadSecurity does.
func (c *peerClasses) resolve(w peerView) WorkloadMTLS {
	ns, ok := c.namespaces[w.Namespace]
	if !ok {
		ns = c.applying.fetchNamespacePeers(c.ctx, w.Namespace)
		if c.namespaces == nil {
			c.namespaces = map[string][]securityPolicy{}
		}
		c.namespaces[w.Namespace] = ns
	}
	sel := c.applying.fetchSelectingPeers(c.ctx, w.Namespace, w.Labels)
	peers := securityPolicy.peerAuthn
	return resolveMTLS(ofKind(c.mesh.Policies, peers), ofKind(ns, peers), ofKind(sel, peers))
}
