package collections

import (
	"slices"

	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/meshd/meshd/krt"
)

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
func newClusterSecurity(g *krt.Graph, endpoints krt.Collection[ServiceEndpoints], workloads krt.Collection[Workload],
	applying applyingPolicies) krt.Collection[ClusterSecurity] {
	return krt.NewCollection(g, endpoints, func(ctx krt.HandlerContext, se ServiceEndpoints) *ClusterSecurity {
		cs := &ClusterSecurity{Cluster: se.Cluster}
		keys := endpointWorkloads(se.Endpoints)
		if len(keys) == 0 {
			return cs
		}
		// One read for all the endpoints' workloads, not one per
		// endpoint, of what their identity and modes depend on; the
		// policies are read once per kind of workload (peerClasses):
		// a hundred thousand pods would otherwise keep as many
		// dependency records. Only PeerAuthentications are read, so an
		// authorization policy recomputes no cluster.
		classes := newPeerClasses(ctx, applying)
		peers := make(map[string]clientView, len(keys))
		for _, w := range krt.PartialFetch(ctx, workloads, Workload.peerView, krt.FilterKeys(keys...)) {
			p := classes.view(w)
			peers[w.key] = p
			if p.SPIFFEID != "" {
				cs.SANs = append(cs.SANs, p.SPIFFEID)
			}
		}
		for _, e := range se.Endpoints {
			if p, ok := peers[e.Workload]; ok && p.MTLS.PortMode(e.Port) == MTLSStrict {
				cs.MTLS = true
				break
			}
		}
		slices.Sort(cs.SANs)
		cs.SANs = slices.Compact(cs.SANs)
		return cs
	}, krt.WithName("ClusterSecurity"))
}

// clientView is the part of a workload's security its clients depend on.
type clientView struct {
	SPIFFEID string
	MTLS     WorkloadMTLS
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
