package xdstest

import (
	"context"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
)

// Stream is a raw ADS stream driven by hand, over either protocol: the
// test decides what to send, what to ACK or NACK, and whether responses
// are read at all. Req and Resp are the protocol's request and response
// messages; use SotW and Delta. A Stream is used by one test goroutine;
// its receive goroutine ends, and its stream closes, when the test ends.
type Stream[Req, Resp any] struct {
	t      testing.TB
	proto  protocol[Req, Resp]
	stream grpc.BidiStreamingClient[Req, Resp]
	// resps carries the responses; nil when they are not read.
	resps chan *Resp
	// node goes with the first request, then is nil.
	node    *corev3.Node
	timeout time.Duration
	// accepted is, per type URL, the version of the last response
	// ACKed: what a NACK names as the version the client holds.
	accepted map[string]string
	// err is the error that ended the stream, set before resps closes.
	err error
	// close ends the stream and waits for its receive goroutine.
	close func()
}

// SotW is a State-of-the-World stream (StreamAggregatedResources).
type SotW = Stream[discovery.DiscoveryRequest, discovery.DiscoveryResponse]

// Delta is a Delta stream (DeltaAggregatedResources).
type Delta = Stream[discovery.DeltaDiscoveryRequest, discovery.DeltaDiscoveryResponse]

// Option configures a Stream.
type Option func(*config)

type config struct {
	unread  bool
	buffer  int
	timeout time.Duration
}

// Unread leaves the stream's responses unread: it stands for a proxy
// that stopped reading. Recv then fails the test. Default: read.
func Unread() Option { return func(c *config) { c.unread = true } }

// WithBuffer sets how many responses are queued unread before the
// stream stops reading (flow control then holds the server back).
// Default: 100.
func WithBuffer(n int) Option { return func(c *config) { c.buffer = n } }

// NewSotW opens a SotW stream on cc. node, if not nil, goes with the
// first request sent.
func NewSotW(t testing.TB, cc grpc.ClientConnInterface, node *corev3.Node, opts ...Option) *SotW {
	t.Helper()
	return open(t, sotwProtocol, cc, node, opts)
}

// NewDelta opens a Delta stream on cc. node, if not nil, goes with the
// first request sent.
func NewDelta(t testing.TB, cc grpc.ClientConnInterface, node *corev3.Node, opts ...Option) *Delta {
	t.Helper()
	return open(t, deltaProtocol, cc, node, opts)
}

func open[Req, Resp any](t testing.TB, p protocol[Req, Resp], cc grpc.ClientConnInterface, node *corev3.Node, opts []Option) *Stream[Req, Resp] {
	t.Helper()
	cfg := config{buffer: 100, timeout: 20 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := p.open(ctx, discovery.NewAggregatedDiscoveryServiceClient(cc))
	if err != nil {
		cancel()
		t.Fatalf("open ADS stream: %v", err)
	}
	s := &Stream[Req, Resp]{t: t, proto: p, stream: stream, node: node, timeout: cfg.timeout, accepted: map[string]string{}}
	done := make(chan struct{})
	if cfg.unread {
		close(done)
	} else {
		s.resps = make(chan *Resp, cfg.buffer)
		go s.read(ctx, done)
	}
	var once sync.Once
	s.close = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(s.close)
	return s
}

// Close ends the stream, as a proxy that goes away does, and waits for
// its receive goroutine; the test's end does the same. Send then fails
// the test, and Responses closes. Close may be called more than once.
func (s *Stream[Req, Resp]) Close() { s.close() }

// read receives responses into resps until the stream ends.
func (s *Stream[Req, Resp]) read(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	for {
		r, err := s.stream.Recv()
		if err != nil {
			s.err = err
			close(s.resps)
			return
		}
		select {
		case s.resps <- r:
		case <-ctx.Done():
			s.err = ctx.Err()
			close(s.resps)
			return
		}
	}
}

// Send sends req, with the stream's node if it is the first request.
func (s *Stream[Req, Resp]) Send(req *Req) {
	s.t.Helper()
	if s.node != nil {
		s.proto.setNode(req, s.node)
		s.node = nil
	}
	if err := s.stream.Send(req); err != nil {
		s.t.Fatalf("ADS send: %v", err)
	}
}

// Recv waits for the next response; it fails the test if the stream ends
// or none comes within 20s.
func (s *Stream[Req, Resp]) Recv() *Resp {
	s.t.Helper()
	if s.resps == nil {
		s.t.Fatal("Recv on an Unread stream")
	}
	select {
	case r, ok := <-s.resps:
		if !ok {
			s.t.Fatalf("ADS stream ended: %v", s.err)
		}
		return r
	case <-time.After(s.timeout):
		s.t.Fatalf("no ADS response within %v", s.timeout)
	}
	return nil
}

// Responses returns the channel of responses, closed when the stream
// ends; nil for an Unread stream.
func (s *Stream[Req, Resp]) Responses() <-chan *Resp { return s.resps }

// Ended waits for the server to end the stream, skipping any responses
// still queued, and returns the error that ended it (io.EOF when the
// server returned nil).
func (s *Stream[Req, Resp]) Ended() error {
	s.t.Helper()
	timeout := time.After(s.timeout)
	for {
		select {
		case _, ok := <-s.resps:
			if !ok {
				return s.err
			}
		case <-timeout:
			s.t.Fatal("ADS stream not ended")
			return nil
		}
	}
}
