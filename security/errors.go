package security

import "errors"

// Errors a CSR is refused with; Sign wraps them with detail.
var (
	// ErrCSRTooLarge is returned when a CSR's PEM exceeds the size limit
	// (WithMaxCSRBytes).
	ErrCSRTooLarge = errors.New("security: CSR too large")
	// ErrMalformedCSR is returned when a CSR is not one PEM "CERTIFICATE
	// REQUEST" whose DER parses and whose signature verifies.
	ErrMalformedCSR = errors.New("security: malformed CSR")
	// ErrUnsupportedKey is returned when a CSR's public key is not ECDSA
	// P-256 or P-384, nor RSA of 2048 to 4096 bits.
	ErrUnsupportedKey = errors.New("security: unsupported key type")
	// ErrIdentityMismatch is returned when a CSR names an identity other
	// than the caller's (a URI SAN that is not the caller's SPIFFE ID).
	ErrIdentityMismatch = errors.New("security: CSR names another identity")
	// ErrBadValidity is returned for a negative requested validity.
	ErrBadValidity = errors.New("security: bad validity")
)

// Errors of the authority and its stores.
var (
	// ErrNoState is returned by a Store's Load when it holds no CA state.
	ErrNoState = errors.New("security: no CA state stored")
	// ErrConflict is returned by a Store's Update when the state changed
	// since the revision it was given.
	ErrConflict = errors.New("security: CA state changed concurrently")
	// ErrRotating is returned by Rotate while a rotation is under way.
	ErrRotating = errors.New("security: a root rotation is under way")
	// ErrNoSigner is returned when no root signs at the given time.
	ErrNoSigner = errors.New("security: no root signs now")
	// ErrNotInitialized is returned by Sign before Init succeeded.
	ErrNotInitialized = errors.New("security: authority not initialized")
	// ErrStatic is returned by Rotate on an operator's CA, which meshd
	// does not rotate.
	ErrStatic = errors.New("security: an operator's CA is not rotated by meshd")
)

// Errors an Authenticator returns for a credential it does not accept.
var (
	// ErrMissingToken is returned when a request carries no token.
	ErrMissingToken = errors.New("security: no token")
	// ErrMalformedToken is returned for a token that cannot be one (empty,
	// holding spaces, not "Bearer <token>").
	ErrMalformedToken = errors.New("security: malformed token")
	// ErrUnknownToken is returned for a token no one issued, or that the
	// issuer no longer accepts (revoked, wrong audience).
	ErrUnknownToken = errors.New("security: unknown token")
	// ErrExpiredToken is returned for a token past its expiry.
	ErrExpiredToken = errors.New("security: expired token")
	// ErrAuthUnavailable is returned when the token cannot be checked now
	// (the API server is unreachable); the caller may retry.
	ErrAuthUnavailable = errors.New("security: token check unavailable")
)
