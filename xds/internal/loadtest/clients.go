package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/pprof"
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

// changes maps each IP a pod moved to to the time it was set, and to the
// time the write returned, the model having taken it in.
type changes struct{ set, applied sync.Map }

func (c *changes) written(ip string, t time.Time)  { c.set.Store(ip, t) }
func (c *changes) returned(ip string, t time.Time) { c.applied.Store(ip, t) }

// when returns when ip was set and when its write returned (zero while
// it has not).
func (c *changes) when(ip string) (set, applied time.Time, ok bool) {
	v, ok := c.set.Load(ip)
	if !ok {
		return time.Time{}, time.Time{}, false
	}
	if a, ok := c.applied.Load(ip); ok {
		applied = a.(time.Time)
	}
	return v.(time.Time), applied, true
}

// fleet is the clients and what they measured.
type fleet struct {
	conns   []*grpc.ClientConn
	cancel  context.CancelFunc
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
func connect(addr string, n, per int, m *mesh, ch *changes) (f *fleet, err error) {
	// The clients' goroutines, gRPC's included, carry the label
	// side=clients in CPU profiles: the server's CPU is the rest.
	pprof.Do(context.Background(), pprof.Labels("side", "clients"), func(ctx context.Context) {
		f, err = connectLabeled(ctx, addr, n, per, m, ch)
	})
	return f, err
}

func connectLabeled(ctx context.Context, addr string, n, per int, m *mesh, ch *changes) (*fleet, error) {
	ctx, cancel := context.WithCancel(ctx)
	f := &fleet{cancel: cancel, changes: ch}
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

// observe records the load assignment c and the latency of each IP in it
// that the client did not hold and that a change set.
func (f *fleet) observe(now time.Time, held map[string]map[string]bool, c *endpointv3.ClusterLoadAssignment) {
	prev, had := held[c.ClusterName]
	cur := map[string]bool{}
	var lat, push []time.Duration
	for _, l := range c.Endpoints {
		for _, e := range l.LbEndpoints {
			ip := e.GetEndpoint().GetAddress().GetSocketAddress().GetAddress()
			cur[ip] = true
			if had && !prev[ip] {
				if set, applied, ok := f.changes.when(ip); ok {
					// Before the write returned: no wait at all.
					lat, push = append(lat, now.Sub(set)), append(push, max(0, now.Sub(applied)))
					if applied.IsZero() {
						push[len(push)-1] = 0
					}
				}
			}
		}
	}
	held[c.ClusterName] = cur
	if len(lat) > 0 {
		f.mu.Lock()
		f.latencies = append(f.latencies, lat...)
		f.pushLatencies = append(f.pushLatencies, push...)
		f.mu.Unlock()
	}
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
// every client goroutine has ended.
func (f *fleet) leave() {
	f.cancel()
	f.wg.Wait()
	for _, cc := range f.conns {
		cc.Close()
	}
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
