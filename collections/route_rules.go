package collections

import (
	"fmt"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The conversion of route rules that HTTPRoute and GRPCRoute share: the
// rules in order, each rule's matches, header modifier filters, and
// backends. What only one kind has (HTTPRoute's timeouts and retries, the
// kinds' match types) is in convertHTTPRule and convertGRPCRule.

// convertRules converts rules in order with convert, naming the index of
// the first rule that fails.
func convertRules[R any](rules []R, convert func(R) (pendingRule, error)) ([]pendingRule, error) {
	out := make([]pendingRule, 0, len(rules))
	for i, r := range rules {
		pr, err := convert(r)
		if err != nil {
			return nil, fmt.Errorf("rule %d: %w", i, err)
		}
		out = append(out, pr)
	}
	return out, nil
}

// convertRule sets the matches of pr, converted by convertMatch, and its
// header modifiers from filters, whose type and modifiers filter reads.
func convertRule[M, F any](pr *pendingRule, matches []M, convertMatch func(M) (RouteMatch, error),
	filters []F, filter func(F) (typ string, request, response *gatewayv1.HTTPHeaderFilter)) error {
	for _, m := range matches {
		rm, err := convertMatch(m)
		if err != nil {
			return err
		}
		pr.rule.Matches = append(pr.rule.Matches, rm)
	}
	for _, f := range filters {
		if err := pr.rule.applyFilter(filter(f)); err != nil {
			return err
		}
	}
	return nil
}

// applyFilter applies a filter of type typ, with its header modifiers.
// HTTPRoute and GRPCRoute spell the supported types alike.
func (r *RouteRule) applyFilter(typ string, request, response *gatewayv1.HTTPHeaderFilter) error {
	var err error
	switch typ {
	case string(gatewayv1.HTTPRouteFilterRequestHeaderModifier):
		r.RequestHeaders, err = convertHeaderFilter(request)
	case string(gatewayv1.HTTPRouteFilterResponseHeaderModifier):
		r.ResponseHeaders, err = convertHeaderFilter(response)
	default:
		err = unsupported("filter %q not supported", typ)
	}
	return err
}

// addBackend adds a backend reference, which must have no filters of its
// own.
func (pr *pendingRule) addBackend(ref gatewayv1.BackendRef, filters int) error {
	if filters > 0 {
		return unsupported("backend filters not supported")
	}
	pr.backends = append(pr.backends, ref)
	return nil
}
