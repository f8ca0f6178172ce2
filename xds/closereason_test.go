package xds

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
)

// TestCloseReason: what a stream's end and its connection's show, turned
// into the operator's reason.
func TestCloseReason(t *testing.T) {
	kp := keepalive.ServerParameters{Time: 30 * time.Second, Timeout: 10 * time.Second, MaxConnectionAge: time.Hour}
	canceled := status.Error(codes.Canceled, context.Canceled.Error())
	open := connEnd{known: true}
	byClient := connEnd{known: true, closed: true, age: time.Minute, silent: time.Second}
	byServer := connEnd{known: true, closed: true, byServer: true, age: time.Minute, silent: time.Second}
	silent := connEnd{known: true, closed: true, byServer: true, age: time.Minute, silent: 40 * time.Second}
	aged := connEnd{known: true, closed: true, byServer: true, age: 55 * time.Minute, silent: time.Second}
	for _, tc := range []struct {
		name string
		end  streamEnd
		want CloseReason
	}{
		{"half-close", streamEnd{conn: open}, CloseClientClosed},
		{"shutdown wins over the cancel it causes", streamEnd{err: canceled, shutdown: true, conn: byServer}, CloseServerShutdown},
		{"shutdown status", streamEnd{err: status.Error(codes.Unavailable, "xds: server shutting down"), shutdown: true, conn: open}, CloseServerShutdown},
		{"stream cancelled, connection up", streamEnd{err: canceled, conn: open}, CloseClientCancelled},
		{"client deadline", streamEnd{err: context.DeadlineExceeded, conn: open}, CloseClientCancelled},
		{"client closed the connection", streamEnd{err: canceled, conn: byClient}, CloseTransportClosed},
		{"send failed on a closed connection", streamEnd{err: status.Error(codes.Unavailable, "transport is closing"), conn: byClient}, CloseTransportClosed},
		{"server closed it, client talking", streamEnd{err: canceled, conn: byServer}, CloseTransportClosed},
		{"silent past ping and timeout", streamEnd{err: canceled, conn: silent, keepalive: kp}, CloseKeepaliveTimeout},
		{"silent, but less than ping and timeout", streamEnd{err: canceled, conn: connEnd{known: true, closed: true, byServer: true, silent: 35 * time.Second}, keepalive: kp}, CloseTransportClosed},
		{"silent client that closed itself", streamEnd{err: canceled, conn: connEnd{known: true, closed: true, silent: time.Hour}, keepalive: kp}, CloseTransportClosed},
		{"at maximum age less jitter", streamEnd{err: canceled, conn: aged, keepalive: kp}, CloseConnectionAge},
		{"younger than maximum age", streamEnd{err: canceled, conn: byServer, keepalive: kp}, CloseTransportClosed},
		{"no maximum age", streamEnd{err: canceled, conn: aged, keepalive: keepalive.ServerParameters{Time: time.Hour}}, CloseTransportClosed},
		{"limit", streamEnd{err: status.Error(codes.ResourceExhausted, "over the limit"), conn: open}, CloseRefused},
		{"identity", streamEnd{err: fmt.Errorf("stream: %w", status.Error(codes.PermissionDenied, "namespace")), conn: open}, CloseRefused},
		{"anonymous", streamEnd{err: status.Error(codes.Unauthenticated, "no certificate"), conn: open}, CloseRefused},
		{"invalid request", streamEnd{err: status.Error(codes.InvalidArgument, "bad nonce"), conn: open}, CloseRefused},
		{"untracked connection", streamEnd{err: canceled}, CloseUnknown},
		{"plain error, connection up", streamEnd{err: errors.New("boom"), conn: open}, CloseClientCancelled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := closeReason(tc.end); got != tc.want {
				t.Errorf("closeReason(%+v) = %q, want %q", tc.end, got, tc.want)
			}
		})
	}
}

// TestHistories: each node keeps its newest MaxSessions streams, and the
// node whose last stream ended longest ago is forgotten first.
func TestHistories(t *testing.T) {
	h := newHistories(2)
	for id := uint64(1); id <= MaxSessions+3; id++ {
		h.add("a", Session{ID: id})
	}
	h.add("", Session{ID: 100})
	got := h.of("a", MaxSessions+3)
	if len(got) != MaxSessions-1 || got[0].ID != MaxSessions+2 || got[len(got)-1].ID != 4 {
		t.Fatalf("history of a but its latest = %v, want ids %d down to 4", got, MaxSessions+2)
	}
	if got := h.of("", 0); got != nil {
		t.Errorf("an empty node id has history %v", got)
	}
	h.add("b", Session{ID: 20})
	h.add("a", Session{ID: 21}) // a ended last: b is now the oldest
	h.add("c", Session{ID: 22})
	if got := h.of("b", 0); got != nil {
		t.Errorf("b kept %v past the bound of 2 nodes", got)
	}
	if h.of("a", 0) == nil || h.of("c", 0) == nil {
		t.Errorf("a or c forgotten: a %v, c %v", h.of("a", 0), h.of("c", 0))
	}
}
