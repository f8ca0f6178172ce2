package collections

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources/meshconfig"
)

// Protocol is the application protocol of a service port, as the mesh
// understands it.
type Protocol string

// Protocols a service port can carry. ProtocolTCP is the default for a
// port whose protocol cannot be told from its appProtocol or name.
const (
	ProtocolHTTP    Protocol = "HTTP"
	ProtocolHTTP2   Protocol = "HTTP2"
	ProtocolGRPC    Protocol = "GRPC"
	ProtocolGRPCWeb Protocol = "GRPC-Web"
	ProtocolHTTPS   Protocol = "HTTPS"
	ProtocolTLS     Protocol = "TLS"
	ProtocolTCP     Protocol = "TCP"
)

// IsHTTP reports whether traffic of protocol p can be routed by HTTP
// attributes (path, headers, method).
func (p Protocol) IsHTTP() bool {
	switch p {
	case ProtocolHTTP, ProtocolHTTP2, ProtocolGRPC, ProtocolGRPCWeb:
		return true
	}
	return false
}

// IsHTTP2 reports whether upstream connections for p must speak HTTP/2.
func (p Protocol) IsHTTP2() bool { return p == ProtocolHTTP2 || p == ProtocolGRPC }

// protocolNames maps the lower-case spelling used in appProtocol and port
// name prefixes to a Protocol.
var protocolNames = map[string]Protocol{
	"http":              ProtocolHTTP,
	"http2":             ProtocolHTTP2,
	"h2c":               ProtocolHTTP2,
	"kubernetes.io/h2c": ProtocolHTTP2,
	"grpc":              ProtocolGRPC,
	"grpc-web":          ProtocolGRPCWeb,
	"https":             ProtocolHTTPS,
	"tls":               ProtocolTLS,
	"tcp":               ProtocolTCP,
	"kubernetes.io/ws":  ProtocolHTTP,
	"kubernetes.io/wss": ProtocolHTTPS,
	"mongo":             ProtocolTCP,
	"mysql":             ProtocolTCP,
	"redis":             ProtocolTCP,
}

// PortProtocol derives the protocol of a service port: the appProtocol
// when it names a known protocol, else the port name when it is a known
// protocol or starts with one followed by "-" ("grpc-api", "http-web"),
// else TCP. Matching ignores case.
func PortProtocol(name string, appProtocol *string) Protocol {
	if appProtocol != nil {
		if p, ok := protocolNames[strings.ToLower(*appProtocol)]; ok {
			return p
		}
	}
	n := strings.ToLower(name)
	if p, ok := protocolNames[n]; ok {
		return p
	}
	// Try the longest prefix first: "grpc-web-ui" is gRPC-Web, "grpc-api"
	// is gRPC.
	for i := strings.LastIndex(n, "-"); i > 0; i = strings.LastIndex(n[:i], "-") {
		if p, ok := protocolNames[n[:i]]; ok {
			return p
		}
	}
	return ProtocolTCP
}

// ServicePort is one port of a service.
type ServicePort struct {
	// Name is the port's name; empty for the single port of a service.
	Name string
	// Port is the port clients connect to.
	Port int32
	// TargetPort is the port on the workload when given by number; 0 when
	// given by name.
	TargetPort int32
	// TargetPortName is the name of the workload's container port when the
	// target port is given by name; it is resolved per workload.
	TargetPortName string
	// Protocol is derived by PortProtocol.
	Protocol Protocol
}

// ServiceInfo is the mesh's view of a Kubernetes Service.
type ServiceInfo struct {
	Name      string
	Namespace string
	// Hostname is "<name>.<namespace>.svc.<domainSuffix>".
	Hostname string
	// ClusterIP is the service's virtual IP; empty for headless services
	// and for services whose manifest sets none (as folder manifests
	// seldom do: only the API server allocates one).
	ClusterIP string
	// Headless is set for "clusterIP: None" alone: such a service's
	// clients reach its pods directly, so no listener stands in for it.
	// An unset clusterIP is not headless.
	Headless bool
	// Selector selects the service's pods; nil for a selector-less
	// service, whose endpoints come from EndpointSlices.
	Selector map[string]string
	// PublishNotReady publishes every selected workload as healthy, ready
	// or not (spec.publishNotReadyAddresses).
	PublishNotReady bool
	// Ports are the TCP ports of the service, in spec order; UDP and SCTP
	// ports are left out, as the mesh does not proxy them.
	Ports []ServicePort
	// ExportTo lists the namespaces whose proxies may see the service's
	// resources, from the AnnotationExportTo annotation; nil means every
	// namespace (see ParseExportTo).
	ExportTo []string
}

// AnnotationExportTo is the Service annotation that limits the namespaces
// whose proxies may see the service, in the simple namespace form of
// Istio's exportTo: a comma-separated list of "*" (every namespace), "."
// (the service's own namespace) or namespace names. It is enforced only
// when the xDS server isolates namespaces.
const AnnotationExportTo = "networking.istio.io/exportTo"

// ParseExportTo resolves the value of AnnotationExportTo for a service of
// namespace ns: nil (every namespace) when the value is empty, lists "*",
// or lists nothing but blanks; else the listed namespaces, "." replaced by
// ns, sorted and distinct. Istio's "~" (no namespace) needs no special
// case: no namespace is named "~", so it hides the service from all.
func ParseExportTo(value, ns string) []string {
	var out []string
	for _, e := range strings.Split(value, ",") {
		switch e = strings.TrimSpace(e); e {
		case "":
			continue
		case "*":
			return nil
		case ".":
			e = ns
		}
		out = append(out, e)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ResourceName returns "namespace/name".
func (s ServiceInfo) ResourceName() string { return s.Namespace + "/" + s.Name }

// GetNamespace returns the service's namespace.
func (s ServiceInfo) GetNamespace() string { return s.Namespace }

// Equals reports whether s and o are the same.
func (s ServiceInfo) Equals(o ServiceInfo) bool {
	return s.Name == o.Name && s.Namespace == o.Namespace && s.Hostname == o.Hostname &&
		s.ClusterIP == o.ClusterIP && s.Headless == o.Headless && s.PublishNotReady == o.PublishNotReady && maps.Equal(s.Selector, o.Selector) && slices.Equal(s.Ports, o.Ports) &&
		slices.Equal(s.ExportTo, o.ExportTo)
}

// Port returns the service port numbered port.
func (s ServiceInfo) Port(port int32) (ServicePort, bool) {
	for _, p := range s.Ports {
		if p.Port == port {
			return p, true
		}
	}
	return ServicePort{}, false
}

// Hostname returns the cluster-local DNS name of a service.
func Hostname(name, namespace, domainSuffix string) string {
	return name + "." + namespace + ".svc." + domainSuffix
}

// buildServiceInfo converts a Service. ExternalName services have no
// endpoints the mesh can balance over and are left out.
func buildServiceInfo(svc *corev1.Service, domainSuffix string) *ServiceInfo {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	info := &ServiceInfo{
		Name:      svc.Name,
		Namespace: svc.Namespace,
		Hostname:  Hostname(svc.Name, svc.Namespace, domainSuffix),

		PublishNotReady: svc.Spec.PublishNotReadyAddresses,
		ExportTo:        ParseExportTo(svc.Annotations[AnnotationExportTo], svc.Namespace),
	}
	if ip := svc.Spec.ClusterIP; ip == corev1.ClusterIPNone {
		info.Headless = true
	} else {
		info.ClusterIP = ip
	}
	if len(svc.Spec.Selector) > 0 {
		info.Selector = maps.Clone(svc.Spec.Selector)
	}
	for _, p := range svc.Spec.Ports {
		if p.Protocol != "" && p.Protocol != corev1.ProtocolTCP {
			continue
		}
		if _, dup := info.Port(p.Port); dup {
			// Clusters are named by port number: the first port wins.
			continue
		}
		sp := ServicePort{Name: p.Name, Port: p.Port, Protocol: PortProtocol(p.Name, p.AppProtocol)}
		switch {
		case p.TargetPort.StrVal != "":
			sp.TargetPortName = p.TargetPort.StrVal
		case p.TargetPort.IntVal != 0:
			sp.TargetPort = p.TargetPort.IntVal
		default:
			// An unset targetPort defaults to the port itself.
			sp.TargetPort = p.Port
		}
		info.Ports = append(info.Ports, sp)
	}
	return info
}

func newServiceInfos(g *krt.Graph, services krt.Collection[*corev1.Service], mesh krt.Collection[meshconfig.MeshConfig]) krt.Collection[ServiceInfo] {
	return krt.NewCollection(g, services, func(ctx krt.HandlerContext, svc *corev1.Service) *ServiceInfo {
		return buildServiceInfo(svc, fetchMesh(ctx, mesh).DomainSuffix)
	}, krt.WithName("ServiceInfo"))
}

// GetSelector returns the service's pod selector, so FilterSelects finds
// the services selecting a workload.
func (s ServiceInfo) GetSelector() map[string]string { return s.Selector }
