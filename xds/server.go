package xds

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	"github.com/meshd/meshd/krt"
)

// Server is an ADS server over a krt graph's collections. Create one with
// New; serve it with Serve or Run. Its methods are safe for concurrent use.
type Server struct {
	opts     options
	typeURLs []string
	// proto is the configuration the streams' sessions share.
	proto  protocol
	joined krt.Collection[entry]
	cache  *cache
	stats  *counters
	// subs routes changed names to the streams they concern.
	subs *subscribers[*conn]

	// recvWG counts the streams' receive goroutines, which may outlive
	// their handler by the time gRPC takes to end the stream.
	recvWG sync.WaitGroup
	// changed is signalled when the cache gains names not yet pushed.
	changed chan struct{}
	// stopping is closed when Serve's context ends: every stream returns.
	// stopCtx ends then too, for the streams' loops (runStream).
	stopping chan struct{}
	stopCtx  context.Context
	stopAll  context.CancelFunc
	// tracker follows the listeners' connections, to tell why a stream
	// ended (closeReason).
	tracker connTracker

	mu    sync.Mutex // guards following
	conns map[uint64]*conn
	// gone are the disconnected streams, oldest first, at most one per
	// node id: a node's earlier streams are in its history.
	gone []*conn
	// goneNames is the sum of the gone conns' retainedNames.
	goneNames int
	history   *histories
	nextID    uint64
	started   bool
}

// New returns a server serving sources, whose collections belong to g.
// It adds to g one derived collection per source (the serialized
// resources) and their join; it starts nothing. The graph must run
// (krt.Graph.Run) for the server to see the resources. New panics if two
// sources have the same type URL, or on an unknown push mode.
func New(g *krt.Graph, sources []Source, opts ...Option) *Server {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if o.pushMode != PushPaced && o.pushMode != PushDebounce {
		panic(fmt.Sprintf("xds: unknown push mode %q", o.pushMode))
	}
	s := &Server{
		opts:     o,
		stats:    newCounters(),
		subs:     newSubscribers[*conn](),
		changed:  make(chan struct{}, 1),
		stopping: make(chan struct{}),
		conns:    map[uint64]*conn{},
		history:  newHistories(o.maxRetained),
	}
	s.stopCtx, s.stopAll = context.WithCancel(context.Background())
	cols := make([]krt.Collection[entry], 0, len(sources))
	variants := s.addSources(sources)
	for _, src := range sources {
		cols = append(cols, src.entries(g))
	}
	s.joined = krt.Join(g, cols, krt.WithName("xds/resources"),
		krt.WithKey(func(e entry) string { return e.res.entryKey() }),
		krt.WithEquals(func(a, b entry) bool { return a.res == b.res }))
	s.cache = newCache(s.typeURLs, variants)
	s.proto = protocol{typeURLs: s.typeURLs, namespaceOf: o.namespaceOf, maxNames: o.maxNames, anonymous: o.anonymous, variantOf: o.variantOf,
		warmingFor: o.warmingFor}
	return s
}

// addSources records the sources' type URLs and Demands and returns
// their variant names per type URL. It panics if two sources serve the
// same type URL and variant, two carry different Demands for one type,
// or a variant's type has no base source.
func (s *Server) addSources(sources []Source) map[string][]string {
	variants := map[string][]string{}
	seen := map[string]bool{}
	for _, src := range sources {
		t, names := src.TypeURL(), src.variantNames()
		if len(names) == 0 {
			names = []string{""}
		}
		if d := src.demandOf(); d != nil {
			if other := s.subs.demands[t]; other != nil && other != d {
				panic(fmt.Sprintf("xds: two demands for %s", t))
			}
			s.subs.demands[t] = d
		}
		for _, v := range names {
			if seen[variantKey(t, v)] {
				panic(fmt.Sprintf("xds: two sources serve %s", variantKey(t, v)))
			}
			seen[variantKey(t, v)] = true
			if v == "" {
				s.typeURLs = append(s.typeURLs, t)
			} else {
				variants[t] = append(variants[t], v)
			}
		}
	}
	for t := range variants {
		if !seen[t] {
			panic(fmt.Sprintf("xds: variants of %s without a base source", t))
		}
	}
	return variants
}

// Run listens on the address set by WithAddress and serves until ctx ends;
// see Serve.
func (s *Server) Run(ctx context.Context) error {
	var lc net.ListenConfig
	lis, err := lc.Listen(ctx, "tcp", s.opts.address)
	if err != nil {
		return fmt.Errorf("xds: listen on %s: %w", s.opts.address, err)
	}
	return s.Serve(ctx, lis)
}

// Serve serves ADS on lis until ctx ends. Streams wait until the server
// holds the collections' initial, synced state before they are answered.
// Each of plaintext is served too, without the server's TLS (WithTLS,
// WithTLSConfig): a plaintext port beside a TLS one, for local tools;
// streams there have no client certificate. When ctx ends, Serve ends
// every stream with Unavailable, waits up to the shutdown grace
// (WithShutdownGrace) for connections to close, closes the rest, and
// returns nil once every goroutine it started has ended. It returns an
// error if TLS cannot be set up, if a listener fails, or if the server
// has served before (ErrServing). Serve closes every listener.
func (s *Server) Serve(ctx context.Context, lis net.Listener, plaintext ...net.Listener) error {
	all := append([]net.Listener{lis}, plaintext...)
	closeAll := func() {
		for _, l := range all {
			l.Close()
		}
	}
	if err := s.claimStart(); err != nil {
		closeAll()
		return err
	}
	servers, err := s.newGRPCServers(len(all))
	if err != nil {
		closeAll()
		return err
	}

	first, unregister := s.followCollections()
	defer unregister()

	var wg sync.WaitGroup
	loopCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg.Add(2)
	go func() {
		defer wg.Done()
		s.pushLoop(loopCtx)
	}()
	go func() {
		defer wg.Done()
		s.markReadyWhenSynced(loopCtx, first)
	}()

	serveErr := make(chan error, len(all))
	for i, gs := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			serveErr <- gs.Serve(s.limitConnections(all[i]))
		}()
	}

	var result error
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		result = fmt.Errorf("xds: serve: %w", err)
	}
	close(s.stopping)
	s.stopAll()
	s.stopGRPC(servers)
	cancel()
	wg.Wait()
	s.recvWG.Wait()
	return result
}

// newGRPCServers returns n gRPC servers with ADS and the extra services:
// the first with the server's TLS, if any, the others plaintext.
func (s *Server) newGRPCServers(n int) ([]*grpc.Server, error) {
	gopts, creds, err := s.grpcOptions()
	if err != nil {
		return nil, err
	}
	servers := make([]*grpc.Server, n)
	for i := range servers {
		var c credentials.TransportCredentials
		if i == 0 {
			c = creds
		}
		// First, so that credentials given by WithGRPCServerOptions win
		// (their connections' close reasons are then unknown).
		opts := append([]grpc.ServerOption{grpc.Creds(s.tracker.creds(c))}, gopts...)
		gs := grpc.NewServer(opts...)
		discovery.RegisterAggregatedDiscoveryServiceServer(gs, &adsService{s: s})
		for _, register := range s.opts.services {
			register(gs)
		}
		servers[i] = gs
	}
	return servers, nil
}

// claimStart marks the server started, failing with ErrServing if Serve
// already ran: the cache and stream state belong to one serving loop.
func (s *Server) claimStart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return ErrServing
	}
	s.started = true
	return nil
}

// limitConnections wraps lis so that connections over the configured
// maximum are closed on accept and counted.
func (s *Server) limitConnections(lis net.Listener) net.Listener {
	if s.opts.maxConns <= 0 {
		return lis
	}
	return newLimitListener(lis, s.opts.maxConns, func(addr net.Addr) {
		s.stats.limit(LimitConnections)
		// Debug, not warn: a flood of connections must not become a
		// flood of log lines; the counter shows it.
		s.opts.logger.Debug("xds: connection closed: over the connection limit", "limit", LimitConnections, "max", s.opts.maxConns, "peer", addr)
	})
}

// followCollections feeds every batch of the joined collections into the
// cache. The returned channel closes once the first batch is applied; the
// returned func stops following.
func (s *Server) followCollections() (first <-chan struct{}, unregister func()) {
	applied := make(chan struct{})
	var once sync.Once
	reg := s.joined.Register(func(b krt.Batch[entry]) {
		s.apply(b)
		once.Do(func() { close(applied) })
	}, krt.WithReplay())
	return applied, reg.Unregister
}

// markReadyWhenSynced marks the cache ready once the collections have
// synced and their state is in the cache, unless ctx ends first.
func (s *Server) markReadyWhenSynced(ctx context.Context, first <-chan struct{}) {
	select {
	case <-s.joined.Synced():
	case <-ctx.Done():
		return
	}
	select {
	case <-first:
		s.cache.markReady()
	case <-ctx.Done():
	}
}

// stopGRPC stops the servers gracefully, letting streams drain for the
// shutdown grace period before closing them hard.
func (s *Server) stopGRPC(servers []*grpc.Server) {
	stopped := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for _, gs := range servers {
			wg.Go(gs.GracefulStop)
		}
		wg.Wait()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(s.opts.shutdownGrace):
		for _, gs := range servers {
			gs.Stop()
		}
		<-stopped
	}
}

// requestWindow is the flow-control window of what the clients send:
// only requests, small but for the name lists of a large subscription,
// so a fixed window this wide never holds one up for long.
const requestWindow = 1 << 20

// readBufferSize is the size of each connection's read buffer.
const readBufferSize = 4 << 10

// grpcOptions returns the gRPC server options every listener shares and,
// apart, the TLS credentials of the main one (nil: plaintext).
func (s *Server) grpcOptions() ([]grpc.ServerOption, credentials.TransportCredentials, error) {
	opts := []grpc.ServerOption{
		grpc.KeepaliveParams(s.opts.keepalive),
		grpc.KeepaliveEnforcementPolicy(s.opts.enforcement),
		grpc.MaxRecvMsgSize(s.opts.maxRecvMsg),
		grpc.MaxConcurrentStreams(s.opts.maxStreams),
		grpc.ForceServerCodecV2(newRequestCodec(s.cache)),
		// Static windows turn gRPC's bandwidth estimation off: with it
		// every request that arrives on an idle connection (each ACK of
		// a push) makes the server send a window update and a BDP ping
		// and read the ping's answer, a write and a read per push.
		grpc.StaticStreamWindowSize(requestWindow),
		grpc.StaticConnWindowSize(requestWindow),
		// xDS requests are small (an ACK is a few hundred bytes) and a
		// frame larger than the buffer is read past it, straight into the
		// frame: gRPC's default of 32 KiB per connection is 3 MiB idle
		// for 100 proxies.
		grpc.ReadBufferSize(readBufferSize),
	}
	opts = append(opts, s.opts.grpcOptions...)
	tc := s.opts.tlsConfig
	if tc == nil && s.opts.tlsFiles != nil {
		var err error
		if tc, err = loadTLS(*s.opts.tlsFiles); err != nil {
			return nil, nil, err
		}
	}
	if tc == nil {
		return opts, nil, nil
	}
	return opts, credentials.NewTLS(tc), nil
}

func loadTLS(f tlsFiles) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(f.cert, f.key)
	if err != nil {
		return nil, fmt.Errorf("xds: load TLS key pair: %w", err)
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if f.clientCA != "" {
		pem, err := os.ReadFile(f.clientCA)
		if err != nil {
			return nil, fmt.Errorf("xds: read client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("xds: client CA %s: no PEM certificate", f.clientCA)
		}
		tc.ClientCAs = pool
		tc.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return tc, nil
}

// apply takes one batch into the cache, which keeps its changed names
// for the next round.
func (s *Server) apply(b krt.Batch[entry]) {
	if changed := s.cache.apply(b); len(changed) == 0 {
		return
	}
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// connect adds c to the registry.
func (s *Server) connect(c *conn) {
	s.mu.Lock()
	s.conns[c.id] = c
	s.pruneLocked(time.Now())
	s.mu.Unlock()
	s.stats.stream(1)
	if o := s.opts.observer; o != nil {
		o.Connect(c.kind)
	}
	s.opts.logger.Debug("xds: stream opened", "conn", c.id, "kind", c.kind, "peer", c.peer)
}

// disconnect moves c to the disconnected proxies, in place of an earlier
// stream of its node, and records the stream in its node's history.
func (s *Server) disconnect(c *conn, err error) {
	now := time.Now()
	end := streamEnd{err: err, conn: c.tc.end(), keepalive: s.opts.keepalive}
	select {
	case <-s.stopping:
		end.shutdown = true
	default:
	}
	c.mu.Lock()
	c.disconnected = now
	c.closeReason = closeReason(end)
	if err != nil {
		c.closeErr = err.Error()
	}
	c.endedNode = c.s.nodeID()
	s.subs.remove(c, c.s)
	for _, ts := range c.s.types {
		c.retainedNames += ts.names.len() + ts.sent.len()
	}
	c.mu.Unlock()
	s.mu.Lock()
	delete(s.conns, c.id)
	s.dropGoneLocked(c.endedNode)
	s.gone = append(s.gone, c)
	s.goneNames += c.retainedNames
	s.history.add(c.endedNode, c.session())
	s.pruneLocked(now)
	s.mu.Unlock()
	s.stats.stream(-1)
	if o := s.opts.observer; o != nil {
		o.Disconnect(c.kind)
	}
	s.opts.logger.Debug("xds: stream closed", "conn", c.id, "proxy", c.endedNode, "reason", c.closeReason, "error", err)
}

// dropGoneLocked drops the retained stream of node, if any; streams
// without a node id are kept. s.mu must be held.
func (s *Server) dropGoneLocked(node string) {
	if node == "" {
		return
	}
	s.gone = slices.DeleteFunc(s.gone, func(g *conn) bool {
		if g.endedNode != node {
			return false
		}
		s.goneNames -= g.retainedNames
		return true
	})
}

// pruneLocked drops disconnected proxies past retention, beyond the
// number retained, or while they hold too many names. s.mu must be held.
func (s *Server) pruneLocked(now time.Time) {
	i := 0
	for i < len(s.gone) && (now.Sub(s.gone[i].disconnected) > s.opts.retention || len(s.gone)-i > s.opts.maxRetained ||
		(s.opts.maxRetainedNames > 0 && s.goneNames > s.opts.maxRetainedNames)) {
		s.goneNames -= s.gone[i].retainedNames
		i++
	}
	if i > 0 {
		s.gone = append([]*conn(nil), s.gone[i:]...)
	}
}

func (s *Server) newConn(ctx context.Context, kind StreamKind) *conn {
	addr := ""
	p, _ := peer.FromContext(ctx)
	if p != nil && p.Addr != nil {
		addr = p.Addr.String()
	}
	s.mu.Lock()
	s.nextID++
	id := s.nextID
	s.mu.Unlock()
	c := newConn(s, id, kind, addr)
	if p != nil {
		c.tc = s.tracker.find(p.LocalAddr, p.Addr)
	}
	cert := verifiedLeaf(p)
	if cert != nil {
		c.identity, c.certExpiry = peerIdentity(cert), cert.NotAfter
	}
	// The session gets the identity as data: the protocol core reads no
	// certificate.
	if f := s.opts.peerNamespace; f != nil && s.opts.namespaceOf != nil {
		c.s.certIdentity = true
		c.s.anonymous = cert == nil
		if cert != nil {
			c.s.ns, c.s.nsOK = f(cert)
		}
	}
	return c
}

// send sends u on c's stream and counts it.
func (s *Server) send(c *conn, u update) error {
	n, err := c.sendFn(u)
	if err != nil {
		return err
	}
	d := time.Since(u.built)
	s.stats.push(u.typeURL, len(u.resources), n, d)
	if o := s.opts.observer; o != nil {
		o.Push(u.typeURL, len(u.resources), n, d)
	}
	return nil
}

// Stats returns a snapshot of the server's counters.
func (s *Server) Stats() Stats {
	st := s.stats.snapshot()
	s.cache.read(func(v view) {
		st.Resources, st.CacheVersion = v.counts(), v.version
	})
	return st
}

// Ready returns a channel closed once the server holds the collections'
// initial state and answers streams.
func (s *Server) Ready() <-chan struct{} { return s.cache.ready }

// TypeURLs returns the served type URLs, in the order of the sources.
func (s *Server) TypeURLs() []string {
	out := append([]string(nil), s.typeURLs...)
	sort.Strings(out)
	return out
}

// adsService implements the ADS gRPC service.
type adsService struct {
	discovery.UnimplementedAggregatedDiscoveryServiceServer
	s *Server
}

func (a *adsService) StreamAggregatedResources(stream discovery.AggregatedDiscoveryService_StreamAggregatedResourcesServer) error {
	c := a.s.newConn(stream.Context(), SotW)
	c.sendFn = func(u update) (int, error) { return sendResponse(stream, SotW, u) }
	return runStream(stream.Context(), a.s, c, stream.Recv, protocolOf[*discovery.DiscoveryRequest]{(*session).sotw, (*session).sotwAnswer})
}

func (a *adsService) DeltaAggregatedResources(stream discovery.AggregatedDiscoveryService_DeltaAggregatedResourcesServer) error {
	c := a.s.newConn(stream.Context(), Delta)
	c.sendFn = func(u update) (int, error) { return sendResponse(stream, Delta, u) }
	return runStream(stream.Context(), a.s, c, stream.Recv, protocolOf[*discovery.DeltaDiscoveryRequest]{(*session).delta, (*session).deltaAnswer})
}
