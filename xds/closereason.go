package xds

import (
	"errors"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
)

// CloseReason says, in an operator's words, why a stream ended
// (ProxyStatus.CloseReason, Session.CloseReason). A gRPC server sees only
// a cancelled context whatever ended a stream's connection, so the server
// watches its connections (when they last read, who closed them, at what
// age) and tells the reasons apart from that.
type CloseReason string

// The reasons a stream ends.
const (
	// CloseClientClosed: the client ended the stream (it half-closed).
	CloseClientClosed CloseReason = "client closed"
	// CloseClientCancelled: the client cancelled the stream; its
	// connection stayed up.
	CloseClientCancelled CloseReason = "client cancelled"
	// CloseTransportClosed: the connection ended under the stream: the
	// client closed it or went away, or the server closed it for a reason
	// other than those below.
	CloseTransportClosed CloseReason = "transport closed"
	// CloseKeepaliveTimeout: the server closed the connection because the
	// client, silent, did not answer a keepalive ping in time
	// (WithKeepalive).
	CloseKeepaliveTimeout CloseReason = "keepalive timeout"
	// CloseConnectionAge: the server closed the connection at its maximum
	// age (WithMaxConnectionAge), after the grace given to its streams.
	CloseConnectionAge CloseReason = "connection age"
	// CloseServerShutdown: the server is shutting down.
	CloseServerShutdown CloseReason = "server shutdown"
	// CloseRefused: the server refused a request (a limit, an identity
	// mismatch, an invalid request) and ended the stream with its status,
	// the close error.
	CloseRefused CloseReason = "refused"
	// CloseUnknown: the stream was cancelled on a connection the server
	// could not tell apart from another with the same addresses.
	CloseUnknown CloseReason = "unknown"
)

// streamEnd is what the server knows when a stream ends.
type streamEnd struct {
	// err is what the stream's handler returns: nil when the client
	// half-closed it.
	err error
	// shutdown is set once Serve's context has ended.
	shutdown bool
	// conn is how the stream's connection ended, if it did.
	conn connEnd
	// keepalive is the server's keepalive configuration.
	keepalive keepalive.ServerParameters
}

// connEnd is how a connection ended, as its tracker saw it.
type connEnd struct {
	// known is false when the stream's connection is not tracked.
	known bool
	// closed is set once the connection is closed; byServer when the
	// server closed it before a read from the client failed.
	closed, byServer bool
	// age is the connection's age when it closed; silent how long it
	// had read nothing by then.
	age, silent time.Duration
}

// closeReason tells why a stream ended.
func closeReason(e streamEnd) CloseReason {
	switch {
	case e.shutdown:
		return CloseServerShutdown
	case e.err == nil:
		return CloseClientClosed
	case refused(e.err):
		return CloseRefused
	case !e.conn.known:
		return CloseUnknown
	case !e.conn.closed:
		return CloseClientCancelled
	case !e.conn.byServer:
		return CloseTransportClosed
	}
	kp := e.keepalive
	if kp.Time > 0 && e.conn.silent >= kp.Time+kp.Timeout {
		return CloseKeepaliveTimeout
	}
	// gRPC adds up to 10% jitter either way to the maximum age.
	if kp.MaxConnectionAge > 0 && e.conn.age >= kp.MaxConnectionAge*9/10 {
		return CloseConnectionAge
	}
	return CloseTransportClosed
}

// refused reports whether err is a status the server ends a stream with
// when it refuses a request (see statusOf), or gRPC's own for a request
// over the message size.
func refused(err error) bool {
	var se interface{ GRPCStatus() *status.Status }
	if !errors.As(err, &se) {
		return false
	}
	switch se.GRPCStatus().Code() {
	case codes.InvalidArgument, codes.ResourceExhausted, codes.PermissionDenied, codes.Unauthenticated:
		return true
	}
	return false
}
