package caserver

import (
	"errors"

	"google.golang.org/grpc/codes"

	"github.com/meshd/meshd/security"
)

// Reason says why a request was refused; it is the label of the refusal
// counters.
type Reason string

// The reasons of refusal.
const (
	ReasonMissingToken     Reason = "missing_token"
	ReasonMalformedToken   Reason = "malformed_token"
	ReasonUnknownToken     Reason = "unknown_token"
	ReasonExpiredToken     Reason = "expired_token"
	ReasonIdentityMismatch Reason = "identity_mismatch"
	ReasonMalformedCSR     Reason = "malformed_csr"
	ReasonCSRTooLarge      Reason = "csr_too_large"
	ReasonUnsupportedKey   Reason = "unsupported_key"
	ReasonBadValidity      Reason = "bad_validity"
	ReasonUnavailable      Reason = "unavailable"
	ReasonInternal         Reason = "internal"
)

// numReasons is len(Reasons).
const numReasons = 11

// Reasons lists every Reason.
var Reasons = [numReasons]Reason{
	ReasonMissingToken, ReasonMalformedToken, ReasonUnknownToken, ReasonExpiredToken,
	ReasonIdentityMismatch, ReasonMalformedCSR, ReasonCSRTooLarge, ReasonUnsupportedKey,
	ReasonBadValidity, ReasonUnavailable, ReasonInternal,
}

// classes maps the security package's errors to a reason and a code;
// the first match wins.
var classes = []struct {
	err    error
	reason Reason
	code   codes.Code
}{
	{security.ErrMissingToken, ReasonMissingToken, codes.Unauthenticated},
	{security.ErrMalformedToken, ReasonMalformedToken, codes.Unauthenticated},
	{security.ErrExpiredToken, ReasonExpiredToken, codes.Unauthenticated},
	{security.ErrUnknownToken, ReasonUnknownToken, codes.Unauthenticated},
	{security.ErrIdentityMismatch, ReasonIdentityMismatch, codes.PermissionDenied},
	{security.ErrMalformedCSR, ReasonMalformedCSR, codes.InvalidArgument},
	{security.ErrCSRTooLarge, ReasonCSRTooLarge, codes.InvalidArgument},
	{security.ErrUnsupportedKey, ReasonUnsupportedKey, codes.InvalidArgument},
	{security.ErrBadValidity, ReasonBadValidity, codes.InvalidArgument},
	{security.ErrAuthUnavailable, ReasonUnavailable, codes.Unavailable},
	{security.ErrNoSigner, ReasonUnavailable, codes.Unavailable},
	{security.ErrNotInitialized, ReasonUnavailable, codes.Unavailable},
}

// classify returns the reason and code of a refusal.
func classify(err error) (Reason, codes.Code) {
	for _, c := range classes {
		if errors.Is(err, c.err) {
			return c.reason, c.code
		}
	}
	return ReasonInternal, codes.Internal
}
