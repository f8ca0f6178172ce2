// Package policystatus writes, on each PeerAuthentication and
// AuthorizationPolicy of the cluster, whether meshd applies all of it: a
// condition of type ConditionType in the policy's status.conditions
// (Istio's IstioStatus). Status "True" (reason "Supported") when every
// field is applied; "False" (reason "UnsupportedFields") when meshd does
// not support some, with the message listing each field and how it was
// applied instead (always fail-closed). The condition observes the
// policy's generation and keeps its lastTransitionTime while its status
// stays the same. Other conditions and fields of the status are kept.
//
// What a policy lacks is computed by the mesh model
// (collections.PeerAuthn.Problems, collections.AuthzPolicy.Problems); the
// writing loop, rate limit and retries are statuswriter's:
//
//	w := policystatus.New(istioClient, model, policystatus.Policies{
//		PeerAuthentications: in.PeerAuthentications, AuthorizationPolicies: in.AuthorizationPolicies},
//		statuswriter.Options{QPS: 10, Burst: 20})
//	go w.Run(ctx) // for as long as this replica leads
package policystatus
