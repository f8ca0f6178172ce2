package collections

import (
	"cmp"
	"net"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
)

// Endpoint is one address serving a service port.
type Endpoint struct {
	// IP and Port are where the workload listens.
	IP   string
	Port int32
	// Healthy is false for endpoints that are not ready; they are
	// published as UNHEALTHY rather than dropped.
	Healthy  bool
	Locality Locality
	// Workload is the "namespace/name" of the pod behind the endpoint, if
	// known.
	Workload string
	// Stale is set on the endpoints of a remote cluster whose API server
	// stopped answering (sources.StaleCluster): they are its last known
	// state. They are served as they were, since an API server that does
	// not answer says nothing of its pods, until the cluster's items
	// leave the inputs (multicluster.WithStaleTimeout).
	Stale bool `json:",omitempty"`
}

// Address returns "ip:port".
func (e Endpoint) Address() string { return net.JoinHostPort(e.IP, strconv.Itoa(int(e.Port))) }

// ServiceEndpoints are the endpoints of one service port.
type ServiceEndpoints struct {
	// Cluster is the port's cluster name, "outbound|<port>||<hostname>";
	// it is the item's key.
	Cluster   string
	Service   string // "namespace/name"
	Hostname  string
	Port      int32
	Protocol  Protocol
	Endpoints []Endpoint // ordered by locality, then address; no address twice
	// ExportTo is the service's (ServiceInfo.ExportTo).
	ExportTo []string
}

// ResourceName returns the cluster name.
func (e ServiceEndpoints) ResourceName() string { return e.Cluster }

// Equals reports whether e and o are the same.
func (e ServiceEndpoints) Equals(o ServiceEndpoints) bool {
	return e.Cluster == o.Cluster && e.Service == o.Service && e.Hostname == o.Hostname &&
		e.Port == o.Port && e.Protocol == o.Protocol && slices.Equal(e.Endpoints, o.Endpoints) &&
		slices.Equal(e.ExportTo, o.ExportTo)
}

// ClusterName returns the name of the cluster of a service port:
// "outbound|<port>||<hostname>".
func ClusterName(port int32, hostname string) string {
	return "outbound|" + strconv.Itoa(int(port)) + "||" + hostname
}

// LabelServiceName is the EndpointSlice label naming its service.
const LabelServiceName = discoveryv1.LabelServiceName

func newEndpoints(g *krt.Graph, services krt.Collection[ServiceInfo], workloads krt.Collection[Workload],
	epSlices krt.Collection[*discoveryv1.EndpointSlice], nodes krt.Collection[*corev1.Node],
	stale krt.Collection[sources.StaleCluster], clusterName string) krt.Collection[ServiceEndpoints] {
	return krt.NewManyCollection(g, services, func(ctx krt.HandlerContext, svc ServiceInfo) []ServiceEndpoints {
		if len(svc.Ports) == 0 {
			return nil
		}
		var perPort [][]Endpoint
		if svc.Selector != nil {
			perPort = podEndpoints(svc, krt.Fetch(ctx, workloads, krt.FilterNamespace(svc.Namespace), krt.FilterLabels(svc.Selector)))
		} else {
			perPort = sliceEndpoints(ctx, svc, krt.Fetch(ctx, epSlices,
				krt.FilterNamespace(svc.Namespace), krt.FilterLabels(map[string]string{LabelServiceName: svc.Name})), nodes, clusterName)
		}
		out := make([]ServiceEndpoints, 0, len(svc.Ports))
		for i, p := range svc.Ports {
			perPort[i] = dedupEndpoints(perPort[i])
			markStale(ctx, stale, perPort[i], clusterName)
			out = append(out, ServiceEndpoints{
				Cluster:   ClusterName(p.Port, svc.Hostname),
				Service:   svc.ResourceName(),
				Hostname:  svc.Hostname,
				Port:      p.Port,
				Protocol:  p.Protocol,
				Endpoints: perPort[i],
				ExportTo:  svc.ExportTo,
			})
		}
		return out
	}, krt.WithName("Endpoints"))
}

// markStale sets Stale on the endpoints of the stale remote clusters,
// recording a dependency on the stale flag of each remote cluster eps
// has, so that only the services of a cluster that turns stale recompute.
func markStale(ctx krt.HandlerContext, stale krt.Collection[sources.StaleCluster], eps []Endpoint, local string) {
	var known map[string]bool
	for i, e := range eps {
		c := e.Locality.Cluster
		if c == "" || c == local {
			continue
		}
		isStale, ok := known[c]
		if !ok {
			_, isStale = krt.FetchOne(ctx, stale, krt.FilterKey(c))
			if known == nil {
				known = map[string]bool{}
			}
			known[c] = isStale
		}
		eps[i].Stale = isStale
	}
}

// podEndpoints returns, per service port, the endpoints of the selected
// workloads. A target port named but absent from a pod leaves that pod out
// of that port, as Kubernetes does.
func podEndpoints(svc ServiceInfo, selected []Workload) [][]Endpoint {
	perPort := make([][]Endpoint, len(svc.Ports))
	for i := range perPort {
		// Sized for every workload: the slices are kept as the item's,
		// and growing them by appending left a third of each unused.
		perPort[i] = make([]Endpoint, 0, len(selected))
	}
	for _, w := range selected {
		if w.IP == "" {
			continue
		}
		for i, p := range svc.Ports {
			target := p.TargetPort
			if p.TargetPortName != "" {
				target = w.NamedPorts[p.TargetPortName]
			}
			if target == 0 {
				continue
			}
			perPort[i] = append(perPort[i], Endpoint{
				IP: w.IP, Port: target, Healthy: w.Ready || svc.PublishNotReady, Locality: w.Locality, Workload: w.ResourceName(),
			})
		}
	}
	return perPort
}

// sliceEndpoints returns, per service port, the endpoints listed by the
// service's EndpointSlices; slice ports match service ports by name. A
// local slice's endpoints are in cluster clusterName.
// FQDN slices are skipped: EDS carries IP addresses.
func sliceEndpoints(ctx krt.HandlerContext, svc ServiceInfo, eps []*discoveryv1.EndpointSlice, nodes krt.Collection[*corev1.Node], clusterName string) [][]Endpoint {
	perPort := make([][]Endpoint, len(svc.Ports))
	for _, s := range eps {
		if s.AddressType == discoveryv1.AddressTypeFQDN {
			continue
		}
		for i, sp := range svc.Ports {
			var target int32
			for _, p := range s.Ports {
				if p.Port != nil && derefOr(p.Name, "") == sp.Name &&
					(p.Protocol == nil || *p.Protocol == corev1.ProtocolTCP) {
					target = *p.Port
					break
				}
			}
			if target == 0 {
				continue
			}
			for _, e := range s.Endpoints {
				healthy := e.Conditions.Ready == nil || *e.Conditions.Ready
				cluster := sources.ClusterOf(s)
				loc := sliceLocality(ctx, nodes, cluster, e)
				loc.Cluster = cmp.Or(cluster, clusterName)
				workload := ""
				if r := e.TargetRef; r != nil && r.Kind == "Pod" {
					workload = Workload{Cluster: cluster, Namespace: cmp.Or(r.Namespace, s.Namespace), Name: r.Name}.ResourceName()
				}
				for _, ip := range e.Addresses {
					perPort[i] = append(perPort[i], Endpoint{IP: ip, Port: target, Healthy: healthy, Locality: loc, Workload: workload})
				}
			}
		}
	}
	return perPort
}

// sliceLocality is the locality of a slice endpoint of cluster: its
// node's labels when the node is known, else its zone hint.
func sliceLocality(ctx krt.HandlerContext, nodes krt.Collection[*corev1.Node], cluster string, e discoveryv1.Endpoint) Locality {
	l, ok := fetchNodeLocality(ctx, nodes, cluster, derefOr(e.NodeName, ""))
	if !ok && e.Zone != nil {
		l = Locality{Zone: *e.Zone}
	}
	l.Cluster = cluster
	return l
}

// dedupEndpoints sorts endpoints by locality and address and keeps one
// per address, preferring a healthy one: the same pod may be listed by
// several slices, and xDS clients reject a duplicate address.
func dedupEndpoints(eps []Endpoint) []Endpoint {
	if len(eps) == 0 {
		return nil
	}
	slices.SortFunc(eps, func(a, b Endpoint) int {
		return cmp.Or(cmp.Compare(a.IP, b.IP), cmp.Compare(a.Port, b.Port),
			// Healthy first, so the kept duplicate is the healthy one.
			boolOrder(b.Healthy, a.Healthy), cmp.Compare(a.Workload, b.Workload),
			cmp.Compare(a.Locality.String(), b.Locality.String()))
	})
	out := eps[:1]
	for _, e := range eps[1:] {
		last := out[len(out)-1]
		if e.IP == last.IP && e.Port == last.Port {
			continue
		}
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b Endpoint) int {
		return cmp.Compare(a.Locality.String(), b.Locality.String())
	})
	return slices.Clip(out)
}

func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func derefOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
