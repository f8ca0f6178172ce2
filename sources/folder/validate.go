package folder

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// setDefaults fills in the defaults the API server would apply to the
// fields meshd reads, so objects from a folder look like objects from a
// cluster.
func setDefaults(obj runtime.Object) {
	switch o := obj.(type) {
	case *corev1.Service:
		if o.Spec.Type == "" {
			o.Spec.Type = corev1.ServiceTypeClusterIP
		}
		for i := range o.Spec.Ports {
			p := &o.Spec.Ports[i]
			if p.Protocol == "" {
				p.Protocol = corev1.ProtocolTCP
			}
			if p.TargetPort == (intstr.IntOrString{}) {
				p.TargetPort = intstr.FromInt32(p.Port)
			}
		}
	case *corev1.Pod:
		for i := range o.Spec.Containers {
			for j := range o.Spec.Containers[i].Ports {
				if p := &o.Spec.Containers[i].Ports[j]; p.Protocol == "" {
					p.Protocol = corev1.ProtocolTCP
				}
			}
		}
	case *discoveryv1.EndpointSlice:
		for i := range o.Ports {
			if o.Ports[i].Protocol == nil {
				tcp := corev1.ProtocolTCP
				o.Ports[i].Protocol = &tcp
			}
		}
	}
}

// validateBuiltin checks the fields of the built-in kinds that a typo
// would make meaningless: ports, protocols and addresses.
func validateBuiltin(obj runtime.Object) error {
	switch o := obj.(type) {
	case *corev1.Service:
		return validateService(o)
	case *corev1.Pod:
		return validatePod(o)
	case *discoveryv1.EndpointSlice:
		return validateEndpointSlice(o)
	case *gatewayv1.HTTPRoute:
		return checkBackendPorts(o.Spec.Rules,
			func(r gatewayv1.HTTPRouteRule) []gatewayv1.HTTPBackendRef { return r.BackendRefs },
			func(b gatewayv1.HTTPBackendRef) gatewayv1.BackendRef { return b.BackendRef })
	case *gatewayv1.GRPCRoute:
		return checkBackendPorts(o.Spec.Rules,
			func(r gatewayv1.GRPCRouteRule) []gatewayv1.GRPCBackendRef { return r.BackendRefs },
			func(b gatewayv1.GRPCBackendRef) gatewayv1.BackendRef { return b.BackendRef })
	}
	return nil
}

// checkBackendPorts checks the port of every backendRef of a route's
// rules, whichever the route's kind: refs returns a rule's backendRefs,
// and ref the BackendRef each embeds.
func checkBackendPorts[Rule, Ref any](rules []Rule, refs func(Rule) []Ref, ref func(Ref) gatewayv1.BackendRef) error {
	var errs []error
	for i, r := range rules {
		for j, b := range refs(r) {
			errs = append(errs, checkBackendPort(fmt.Sprintf("spec.rules[%d].backendRefs[%d].port", i, j), ref(b).Port))
		}
	}
	return errors.Join(errs...)
}

// validateService checks port names (required and unique when there are
// several), port numbers, protocols and target ports.
func validateService(o *corev1.Service) error {
	var errs []error
	if o.Spec.Type != corev1.ServiceTypeExternalName && len(o.Spec.Ports) > 1 {
		names := map[string]bool{}
		for i, p := range o.Spec.Ports {
			if p.Name == "" {
				errs = append(errs, fmt.Errorf("spec.ports[%d].name: required when a Service has several ports", i))
			} else if names[p.Name] {
				errs = append(errs, fmt.Errorf("spec.ports[%d].name %q: duplicate", i, p.Name))
			}
			names[p.Name] = true
		}
	}
	for i, p := range o.Spec.Ports {
		errs = append(errs, checkPort(fmt.Sprintf("spec.ports[%d].port", i), p.Port))
		errs = append(errs, checkProtocol(fmt.Sprintf("spec.ports[%d].protocol", i), p.Protocol))
		if p.TargetPort.Type == intstr.Int {
			errs = append(errs, checkPort(fmt.Sprintf("spec.ports[%d].targetPort", i), p.TargetPort.IntVal))
		} else if msgs := validation.IsValidPortName(p.TargetPort.StrVal); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("spec.ports[%d].targetPort %q: %v", i, p.TargetPort.StrVal, msgs))
		}
	}
	return errors.Join(errs...)
}

// validatePod checks container ports and protocols and the pod IP.
func validatePod(o *corev1.Pod) error {
	var errs []error
	for i, c := range o.Spec.Containers {
		for j, p := range c.Ports {
			errs = append(errs, checkPort(fmt.Sprintf("spec.containers[%d].ports[%d].containerPort", i, j), p.ContainerPort))
			errs = append(errs, checkProtocol(fmt.Sprintf("spec.containers[%d].ports[%d].protocol", i, j), p.Protocol))
		}
	}
	if ip := o.Status.PodIP; ip != "" && len(validation.IsValidIP(nil, ip)) > 0 {
		errs = append(errs, fmt.Errorf("status.podIP %q: not an IP address", ip))
	}
	return errors.Join(errs...)
}

// validateEndpointSlice checks the address type, ports, and that every
// endpoint has an address.
func validateEndpointSlice(o *discoveryv1.EndpointSlice) error {
	var errs []error
	switch o.AddressType {
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN:
	default:
		errs = append(errs, fmt.Errorf("addressType %q: want IPv4, IPv6 or FQDN", o.AddressType))
	}
	for i, p := range o.Ports {
		if p.Port != nil {
			errs = append(errs, checkPort(fmt.Sprintf("ports[%d].port", i), *p.Port))
		}
	}
	for i, e := range o.Endpoints {
		if len(e.Addresses) == 0 {
			errs = append(errs, fmt.Errorf("endpoints[%d].addresses: at least one is required", i))
		}
	}
	return errors.Join(errs...)
}

func checkPort(field string, port int32) error {
	if port < 1 || port > 65535 {
		return fmt.Errorf("%s %d: must be between 1 and 65535", field, port)
	}
	return nil
}

func checkBackendPort(field string, port *gatewayv1.PortNumber) error {
	if port == nil {
		return nil
	}
	return checkPort(field, int32(*port))
}

func checkProtocol(field string, p corev1.Protocol) error {
	switch p {
	case corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP:
		return nil
	}
	return fmt.Errorf("%s %q: want TCP, UDP or SCTP", field, p)
}
