package deploy_test

import "testing"

// TestRBACPolicyStatus: the leader reads and writes the status of Istio's
// security policies, through the status subresource only, and never their
// spec.
func TestRBACPolicyStatus(t *testing.T) {
	const sec = "security.istio.io"
	var table []access
	for _, r := range []string{"peerauthentications", "authorizationpolicies"} {
		table = append(table,
			access{verb: "list", group: sec, resource: r, allowed: true},
			access{verb: "watch", group: sec, resource: r, namespace: "shop", allowed: true},
			access{verb: "get", group: sec, resource: r, namespace: "shop", name: "p", allowed: true},
			access{verb: "get", group: sec, resource: r, subresource: "status", namespace: "shop", name: "p", allowed: true},
			access{verb: "update", group: sec, resource: r, subresource: "status", namespace: "shop", name: "p", allowed: true},
			access{verb: "patch", group: sec, resource: r, subresource: "status", namespace: "shop", name: "p"},
			access{verb: "update", group: sec, resource: r, namespace: "shop", name: "p"},
			access{verb: "create", group: sec, resource: r, namespace: "shop"},
			access{verb: "delete", group: sec, resource: r, namespace: "shop", name: "p"},
		)
	}
	checkAccess(t, table)
}
