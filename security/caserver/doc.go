// Package caserver serves meshd's CA over gRPC as Istio's certificate
// API: istio.v1.auth.IstioCertificateService/CreateCertificate
// (istio.io/api security/v1alpha1), so an Istio agent can use meshd as
// its CA and meshd agent uses the same call.
//
// A caller proves who it is with a token in the gRPC metadata,
// "authorization: Bearer <token>", which the Authenticator turns into an
// identity; the certificate names that identity and nothing else, whatever
// the CSR asks. The response's cert_chain is the leaf, then each
// intermediate, then the trust bundle: every trusted root concatenated in
// one PEM string, as Istio's CA sends its root bundle (two roots while a
// rotation is under way).
//
// Every refusal has a gRPC status saying what was wrong, is logged, and
// counted by reason (Stats):
//
//	Unauthenticated   no, malformed, unknown or expired token
//	PermissionDenied  the CSR names another identity
//	InvalidArgument   malformed or oversized CSR, unsupported key, bad validity
//	Unavailable       the token could not be checked, or no root signs
//
// Register the Service on any grpc.Server; meshd serves it on its xDS
// listener (xds.WithServices).
package caserver
