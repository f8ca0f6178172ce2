package xds

import "errors"

// ErrTypeMismatch is recorded on a source's derived collection when toProto
// returns a message whose type does not match the source's type URL.
var ErrTypeMismatch = errors.New("xds: message type does not match the source's type URL")

// ErrServing is returned by Serve and Run when the server is already
// serving or has served: a Server serves once.
var ErrServing = errors.New("xds: server already served")

// ErrUnknownProxy is returned by ConfigDump for a connection id the
// registry does not hold.
var ErrUnknownProxy = errors.New("xds: unknown proxy")
