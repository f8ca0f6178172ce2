package collections

import (
	"fmt"
	"maps"
	"slices"

	securityv1beta1 "istio.io/api/security/v1beta1"
	securityv1 "istio.io/client-go/pkg/apis/security/v1"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources/meshconfig"
)

// MTLSMode is how a workload port accepts connections, from
// PeerAuthentication.
type MTLSMode string

// Modes of a workload port. MTLSUnset inherits the broader policy's mode;
// the mesh default, with no policy at all, is MTLSPermissive.
const (
	MTLSUnset      MTLSMode = ""
	MTLSPermissive MTLSMode = "PERMISSIVE"
	MTLSStrict     MTLSMode = "STRICT"
	MTLSDisable    MTLSMode = "DISABLE"
)

// PeerAuthn is the mesh's view of a PeerAuthentication.
type PeerAuthn struct {
	PolicyScope
	// Mode is spec.mtls.mode; MTLSUnset inherits.
	Mode MTLSMode
	// Ports are spec.portLevelMtls: modes by workload port.
	Ports map[uint32]MTLSMode
	// Problems lists the fields meshd does not support; empty when all of
	// the policy is applied.
	Problems []string
}

// ResourceName returns "namespace/name".
func (p PeerAuthn) ResourceName() string { return p.Namespace + "/" + p.Name }

// GetNamespace returns the policy's namespace.
func (p PeerAuthn) GetNamespace() string { return p.Namespace }

// GetSelector returns the workload selector, so FilterSelects finds the
// policies selecting a workload.
func (p PeerAuthn) GetSelector() map[string]string { return p.Selector }

// Equals reports whether p and o are the same.
func (p PeerAuthn) Equals(o PeerAuthn) bool {
	return p.PolicyScope.equal(o.PolicyScope) && p.Mode == o.Mode && maps.Equal(p.Ports, o.Ports) &&
		slices.Equal(p.Problems, o.Problems)
}

// mtlsMode converts an API mode.
func mtlsMode(m *securityv1beta1.PeerAuthentication_MutualTLS) (MTLSMode, error) {
	switch m.GetMode() {
	case securityv1beta1.PeerAuthentication_MutualTLS_UNSET:
		return MTLSUnset, nil
	case securityv1beta1.PeerAuthentication_MutualTLS_PERMISSIVE:
		return MTLSPermissive, nil
	case securityv1beta1.PeerAuthentication_MutualTLS_STRICT:
		return MTLSStrict, nil
	case securityv1beta1.PeerAuthentication_MutualTLS_DISABLE:
		return MTLSDisable, nil
	}
	return MTLSStrict, fmt.Errorf("unknown mode %d, applied as STRICT", m.GetMode())
}

// buildPeerAuthn converts a PeerAuthentication. An unknown mode is applied
// as STRICT, which refuses what the policy's author may have meant to
// refuse.
func buildPeerAuthn(pa *securityv1.PeerAuthentication, rootNamespace string) *PeerAuthn {
	spec := &pa.Spec
	p := &PeerAuthn{PolicyScope: newPolicyScope(pa, spec.GetSelector(), rootNamespace)}
	var err error
	if p.Mode, err = mtlsMode(spec.GetMtls()); err != nil {
		p.Problems = append(p.Problems, "spec.mtls.mode: "+err.Error())
	}
	for port, m := range spec.GetPortLevelMtls() {
		mode, err := mtlsMode(m)
		if err != nil {
			p.Problems = append(p.Problems, fmt.Sprintf("spec.portLevelMtls[%d].mode: %v", port, err))
		}
		if p.Ports == nil {
			p.Ports = map[uint32]MTLSMode{}
		}
		p.Ports[port] = mode
	}
	if p.Ports != nil && p.Selector == nil {
		p.Problems = append(p.Problems, "spec.portLevelMtls: Istio accepts it only with a selector; meshd applies it to every workload the policy applies to")
	}
	slices.Sort(p.Problems)
	return p
}

func newPeerAuthns(g *krt.Graph, in krt.Collection[*securityv1.PeerAuthentication], mesh krt.Collection[meshconfig.MeshConfig]) krt.Collection[PeerAuthn] {
	return krt.NewCollection(g, in, func(ctx krt.HandlerContext, pa *securityv1.PeerAuthentication) *PeerAuthn {
		return buildPeerAuthn(pa, fetchMesh(ctx, mesh).RootNamespace)
	}, krt.WithName("PeerAuthentications"))
}

// WorkloadMTLS is the effective mutual TLS mode of a workload's ports.
type WorkloadMTLS struct {
	// Mode applies to every port not in Ports; never MTLSUnset.
	Mode MTLSMode
	// Ports holds the port-level modes that differ from Mode.
	Ports map[uint32]MTLSMode
	// Policies are the keys of the PeerAuthentications that decided the
	// modes, broadest first.
	Policies []string
}

// Equals reports whether w and o are the same.
func (w WorkloadMTLS) Equals(o WorkloadMTLS) bool {
	return w.Mode == o.Mode && maps.Equal(w.Ports, o.Ports) && slices.Equal(w.Policies, o.Policies)
}

// PortMode returns the mode of a workload port.
func (w WorkloadMTLS) PortMode(port int32) MTLSMode {
	if m, ok := w.Ports[uint32(port)]; ok {
		return m
	}
	return w.Mode
}

// resolveMTLS applies Istio's precedence: the oldest policy of each level,
// the workload's over the namespace's over the mesh's, a level whose mode
// is unset inheriting the broader one; port-level modes come from the
// narrowest of those policies.
func resolveMTLS(mesh, ns, sel []PeerAuthn) WorkloadMTLS {
	out := WorkloadMTLS{Mode: MTLSPermissive}
	var workload *PeerAuthn
	for _, level := range [][]PeerAuthn{mesh, ns, sel} {
		if len(level) == 0 {
			continue
		}
		p := slices.MinFunc(level, func(a, b PeerAuthn) int { return olderFirst(a.PolicyScope, b.PolicyScope) })
		out.Policies = append(out.Policies, p.ResourceName())
		if p.Mode != MTLSUnset {
			out.Mode = p.Mode
		}
		workload = &p
	}
	if workload == nil {
		return out
	}
	for port, m := range workload.Ports {
		if m == MTLSUnset || m == out.Mode {
			continue
		}
		if out.Ports == nil {
			out.Ports = map[uint32]MTLSMode{}
		}
		out.Ports[port] = m
	}
	return out
}
