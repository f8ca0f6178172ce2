package collections

import (
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestFilterTypesAgree guards applyFilter, which matches GRPCRoute filter
// types against HTTPRoute's constants.
func TestFilterTypesAgree(t *testing.T) {
	pairs := [][2]string{
		{string(gatewayv1.GRPCRouteFilterRequestHeaderModifier), string(gatewayv1.HTTPRouteFilterRequestHeaderModifier)},
		{string(gatewayv1.GRPCRouteFilterResponseHeaderModifier), string(gatewayv1.HTTPRouteFilterResponseHeaderModifier)},
	}
	for _, p := range pairs {
		if p[0] != p[1] {
			t.Errorf("GRPCRoute filter type %q, HTTPRoute's %q: applyFilter must tell them apart", p[0], p[1])
		}
	}
}
