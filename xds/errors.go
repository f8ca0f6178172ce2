package xds

import (
	"errors"
	"fmt"
)

// ErrTypeMismatch is recorded on a source's derived collection when toProto
// returns a message whose type does not match the source's type URL.
var ErrTypeMismatch = errors.New("xds: message type does not match the source's type URL")

// ErrServing is returned by Serve and Run when the server is already
// serving or has served: a Server serves once.
var ErrServing = errors.New("xds: server already served")

// ErrUnknownProxy is returned by ConfigDump for a connection id the
// registry does not hold.
var ErrUnknownProxy = errors.New("xds: unknown proxy")

// refusal is why a session refuses a request, which ends its stream; the
// stream code turns each into a gRPC status code (see statusOf).
type refusal int

const (
	// refuseInvalid: the request breaks the protocol (InvalidArgument).
	refuseInvalid refusal = iota
	// refuseLimit: the request would exceed a limit (ResourceExhausted).
	refuseLimit
	// refuseIdentity: the node claims another identity than its
	// certificate's (PermissionDenied).
	refuseIdentity
	// refuseUnauthenticated: the stream has no verified client
	// certificate and anonymous clients are served nothing
	// (Unauthenticated).
	refuseUnauthenticated
)

// protocolError is an error a session returns for a request it refuses.
// The pure protocol code knows no gRPC; its message is the status's.
type protocolError struct {
	why refusal
	msg string
}

func (e *protocolError) Error() string { return e.msg }

func refuse(why refusal, format string, args ...any) error {
	return &protocolError{why: why, msg: fmt.Sprintf(format, args...)}
}
