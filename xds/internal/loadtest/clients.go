package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/meshd/meshd/xds"
)

// streamsPerConn is how many ADS streams share one client connection:
// proxies each have their own, but a thousand loopback TCP connections
// would measure the kernel more than the server.
const streamsPerConn = 50

// stamp is when a change set a pod's IP and when its write returned, the
// model having taken it in, as the load's process measured them.
type stamp struct{ set, applied time.Time }

// changes holds the stamp of every IP a pod moved to. The stamps come
// from the load's process over a pipe, so a client may see an IP before
// its stamp arrives: it waits in early until the stamp does.
type changes struct {
	// record is given the latency of each IP seen: since it was set, and
	// since its write returned (0 when the client saw it before).
	record func(fromSet, fromApplied time.Duration)

	mu    sync.Mutex // guards following
	known map[string]stamp
	early map[string][]time.Time
}

func newChanges(record func(fromSet, fromApplied time.Duration)) *changes {
	return &changes{record: record, known: map[string]stamp{}, early: map[string][]time.Time{}}
}

// stamped records ip's stamp, and the latency of every client that saw
// it already.
func (c *changes) stamped(ip string, st stamp) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.known[ip] = st
	for _, at := range c.early[ip] {
		c.recordLocked(st, at)
	}
	delete(c.early, ip)
}

// seen records that a client saw ip, new to a load assignment it held,
// at at.
func (c *changes) seen(ip string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.known[ip]; ok {
		c.recordLocked(st, at)
		return
	}
	c.early[ip] = append(c.early[ip], at)
}

// forget drops the IPs seen before their stamp came: those of the
// connect, which no change set.
func (c *changes) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.early)
}

func (c *changes) recordLocked(st stamp, at time.Time) {
	// Before the write returned: no wait at all.
	c.record(at.Sub(st.set), max(0, at.Sub(st.applied)))
}

// fleet is the clients and what they measured.
type fleet struct {
	conns   []*grpc.ClientConn
	cancel  context.CancelFunc
	left    sync.Once
	wg      sync.WaitGroup
	changes *changes

	// ready counts the clients holding every load assignment they asked
	// for; responses counts every response received.
	ready     atomic.Int64
	responses atomic.Int64
	// rates, once set, counts each client's responses per second of the
	// load.
	rates atomic.Pointer[rates]

	mu        sync.Mutex // guards following
	latencies []time.Duration
	// pushLatencies are from the write's return: the server's push path
	// alone, without the model's computation.
	pushLatencies []time.Duration
	errs          []error
}

// connect starts n clients against addr; client i wants the clusters of
// services i*per ... i*per+per-1 (modulo the services).
func connect(addr string, n, per int, m *mesh) (*fleet, error) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fleet{cancel: cancel}
	f.changes = newChanges(f.recordLatency)
	for i := 0; i < n; i += streamsPerConn {
		// Fixed flow control windows turn off grpc-go's BDP estimation,
		// whose pings the server's keepalive policy may count as abuse
		// when dozens of streams share a connection.
		cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithInitialWindowSize(1<<20), grpc.WithInitialConnWindowSize(16<<20),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
		if err != nil {
			f.leave()
			return nil, fmt.Errorf("dial %s: %w", addr, err)
		}
		f.conns = append(f.conns, cc)
	}
	for i := range n {
		want := make([]string, 0, per)
		for k := range per {
			want = append(want, m.cluster((i*per+k)%m.services))
		}
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			if err := f.run(ctx, f.conns[i/streamsPerConn], i, want); err != nil {
				f.mu.Lock()
				f.errs = append(f.errs, err)
				f.mu.Unlock()
			}
		}()
	}
	return f, nil
}

// run is one client: it subscribes, ACKs every response, and records the
// latency of every IP new to a load assignment it holds.
func (f *fleet) run(ctx context.Context, cc *grpc.ClientConn, client int, want []string) error {
	node := fmt.Sprintf("load-%d", client)
	s, err := discovery.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(ctx, grpc.WaitForReady(true))
	if err != nil {
		return fmt.Errorf("%s: open: %w", node, err)
	}
	if err := s.Send(&discovery.DiscoveryRequest{Node: &corev3.Node{Id: node}, TypeUrl: xds.ClusterType}); err != nil {
		return fmt.Errorf("%s: send: %w", node, err)
	}
	if err := s.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: want}); err != nil {
		return fmt.Errorf("%s: send: %w", node, err)
	}
	held := map[string]map[string]bool{} // cluster -> IPs
	ready := false
	for {
		r, err := s.Recv()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, io.EOF) || status.Code(err) == codes.Canceled {
				return nil
			}
			return fmt.Errorf("%s: recv: %w", node, err)
		}
		f.responses.Add(1)
		now := time.Now()
		if r := f.rates.Load(); r != nil {
			r.count(client, now)
		}
		var names []string
		if r.TypeUrl == xds.EndpointType {
			names = want
			for _, a := range r.Resources {
				var c endpointv3.ClusterLoadAssignment
				if err := a.UnmarshalTo(&c); err != nil {
					return fmt.Errorf("%s: decode: %w", node, err)
				}
				f.observe(now, held, &c)
			}
			if !ready && len(held) == len(want) {
				ready = true
				f.ready.Add(1)
			}
		}
		if err := s.Send(&discovery.DiscoveryRequest{TypeUrl: r.TypeUrl, VersionInfo: r.VersionInfo, ResponseNonce: r.Nonce, ResourceNames: names}); err != nil {
			if ctx.Err() != nil || errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("%s: ack: %w", node, err)
		}
	}
}

// observe records the load assignment c and, through changes, the
// latency of each IP in it that the client did not hold.
func (f *fleet) observe(now time.Time, held map[string]map[string]bool, c *endpointv3.ClusterLoadAssignment) {
	prev, had := held[c.ClusterName]
	cur := map[string]bool{}
	for _, l := range c.Endpoints {
		for _, e := range l.LbEndpoints {
			ip := e.GetEndpoint().GetAddress().GetSocketAddress().GetAddress()
			cur[ip] = true
			if had && !prev[ip] {
				f.changes.seen(ip, now)
			}
		}
	}
	held[c.ClusterName] = cur
}

// recordLatency records one delivery's latencies.
func (f *fleet) recordLatency(fromSet, fromApplied time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.latencies = append(f.latencies, fromSet)
	f.pushLatencies = append(f.pushLatencies, fromApplied)
}

// measured returns and clears the latencies recorded so far.
func (f *fleet) measured() (fromWrite, fromReturn []time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fromWrite, fromReturn = f.latencies, f.pushLatencies
	f.latencies, f.pushLatencies = nil, nil
	return fromWrite, fromReturn
}

func (f *fleet) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return errors.Join(f.errs...)
}

// leave ends every stream and closes the connections, and returns once
// every client goroutine has ended. Later calls do nothing.
func (f *fleet) leave() {
	f.left.Do(func() {
		f.cancel()
		f.wg.Wait()
		for _, cc := range f.conns {
			cc.Close()
		}
	})
}

// rates counts each client's responses in each second since start.
type rates struct {
	start   time.Time
	seconds int
	counts  []atomic.Int32 // client*seconds + second
}

func newRates(clients int, start time.Time, d time.Duration) *rates {
	secs := int(d/time.Second) + 1
	return &rates{start: start, seconds: secs, counts: make([]atomic.Int32, clients*secs)}
}

func (r *rates) count(client int, now time.Time) {
	if sec := int(now.Sub(r.start) / time.Second); sec >= 0 && sec < r.seconds {
		r.counts[client*r.seconds+sec].Add(1)
	}
}

// max returns the most responses one client received in one second.
func (r *rates) max() int32 {
	var m int32
	for i := range r.counts {
		m = max(m, r.counts[i].Load())
	}
	return m
}
