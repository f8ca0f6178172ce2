package collections

import (
	"slices"

	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources/meshconfig"
)

// WorkloadIdentity is the identity of a workload: the SPIFFE ID of its
// service account, spiffe://<trust domain>/ns/<namespace>/sa/<account>.
type WorkloadIdentity struct {
	Name, Namespace string
	ServiceAccount  string
	SPIFFEID        string
}

// ResourceName returns the workload's "namespace/name".
func (w WorkloadIdentity) ResourceName() string { return w.Namespace + "/" + w.Name }

// SPIFFEID returns the SPIFFE ID of a service account, or ok false when
// the trust domain or a segment is not valid in a SPIFFE ID.
func SPIFFEID(trustDomain, namespace, serviceAccount string) (id string, ok bool) {
	td, err := spiffeid.TrustDomainFromString(trustDomain)
	if err != nil {
		return "", false
	}
	sid, err := spiffeid.FromSegments(td, "ns", namespace, "sa", serviceAccount)
	if err != nil {
		return "", false
	}
	return sid.String(), true
}

func newWorkloadIdentities(g *krt.Graph, workloads krt.Collection[Workload], mesh krt.Collection[meshconfig.MeshConfig]) krt.Collection[WorkloadIdentity] {
	return krt.NewCollection(g, workloads, func(ctx krt.HandlerContext, w Workload) *WorkloadIdentity {
		id, ok := SPIFFEID(fetchMesh(ctx, mesh).TrustDomain, w.Namespace, w.ServiceAccount)
		if !ok {
			return nil
		}
		return &WorkloadIdentity{Name: w.Name, Namespace: w.Namespace, ServiceAccount: w.ServiceAccount, SPIFFEID: id}
	}, krt.WithName("WorkloadIdentities"))
}

// ClusterSecurity is how clients reach the endpoints of one cluster (a
// service port): over mutual TLS when any endpoint's workload requires it
// (STRICT on the endpoint's port), accepting the SPIFFE IDs of the
// service accounts behind the endpoints.
type ClusterSecurity struct {
	Cluster string
	MTLS    bool
	// SANs are the endpoints' workload SPIFFE IDs, sorted and distinct.
	SANs []string
}

// ResourceName returns the cluster name.
func (c ClusterSecurity) ResourceName() string { return c.Cluster }

// Equals reports whether c and o are the same.
func (c ClusterSecurity) Equals(o ClusterSecurity) bool {
	return c.Cluster == o.Cluster && c.MTLS == o.MTLS && slices.Equal(c.SANs, o.SANs)
}

// newClusterSecurity derives each cluster's security from its endpoints.
// It is recomputed when an endpoint changes but emits only when the mode
// or the identities change, so clusters are rebuilt only then.
//
// gRPC servers cannot accept TLS and plaintext on one port (see
// ServerListeners), so one STRICT endpoint makes the whole cluster use
// mutual TLS: the endpoints still on plaintext then fail the handshake
// rather than receive the cluster's traffic in the clear.
func newClusterSecurity(g *krt.Graph, endpoints krt.Collection[ServiceEndpoints], mtls krt.Collection[WorkloadMTLS],
	ids krt.Collection[WorkloadIdentity]) krt.Collection[ClusterSecurity] {
	return krt.NewCollection(g, endpoints, func(ctx krt.HandlerContext, se ServiceEndpoints) *ClusterSecurity {
		cs := &ClusterSecurity{Cluster: se.Cluster}
		keys := endpointWorkloads(se.Endpoints)
		if len(keys) == 0 {
			return cs
		}
		// One read of each collection for all the endpoints, not one per
		// endpoint: a hundred thousand workloads would otherwise keep as
		// many dependency records twice over.
		modes := make(map[string]WorkloadMTLS, len(keys))
		for _, m := range krt.Fetch(ctx, mtls, krt.FilterKeys(keys...)) {
			modes[m.ResourceName()] = m
		}
		for _, e := range se.Endpoints {
			if m, ok := modes[e.Workload]; ok && m.PortMode(e.Port) == MTLSStrict {
				cs.MTLS = true
				break
			}
		}
		for _, id := range krt.Fetch(ctx, ids, krt.FilterKeys(keys...)) {
			cs.SANs = append(cs.SANs, id.SPIFFEID)
		}
		slices.Sort(cs.SANs)
		cs.SANs = slices.Compact(cs.SANs)
		return cs
	}, krt.WithName("ClusterSecurity"))
}

// endpointWorkloads returns the keys of the workloads behind eps, in
// order, without repeats or blanks.
func endpointWorkloads(eps []Endpoint) []string {
	keys := make([]string, 0, len(eps))
	for _, e := range eps {
		if e.Workload != "" {
			keys = append(keys, e.Workload)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}
