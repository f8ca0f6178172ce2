package xds

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
)

// Option configures a Server.
type Option func(*options)

type options struct {
	logger      *slog.Logger
	pushMode    PushMode
	pushWindow  time.Duration
	debounce    time.Duration
	maxDelay    time.Duration
	address     string
	tlsFiles    *tlsFiles
	tlsConfig   *tls.Config
	keepalive   keepalive.ServerParameters
	enforcement keepalive.EnforcementPolicy
	maxRecvMsg  int
	maxStreams  uint32
	maxConns    int
	retention   time.Duration
	maxRetained int
	// maxRetainedNames: see WithMaxRetainedNames.
	maxRetainedNames int
	observer         Observer
	grpcOptions      []grpc.ServerOption
	// services register more gRPC services beside ADS (WithServices).
	services      []func(grpc.ServiceRegistrar)
	shutdownGrace time.Duration
	// unansweredAfter: see WithUnansweredAfter.
	unansweredAfter time.Duration
	// namespaceOf is nil unless namespaces are isolated.
	namespaceOf func(*core.Node) (string, bool)
	// peerNamespace, when set, tells an isolated proxy's namespace from
	// its verified client certificate (WithPeerNamespace).
	peerNamespace func(*x509.Certificate) (string, bool)
	// anonymous: see WithAnonymous.
	anonymous Anonymous
	// maxNames caps the names one stream holds subscribed; 0: no cap.
	maxNames int
	// variantOf: see WithClientVariants.
	variantOf func(*core.Node) string
	// warmingFor: see WithWarmingFor.
	warmingFor func(*core.Node) bool
}

type tlsFiles struct{ cert, key, clientCA string }

func defaultOptions() options {
	return options{
		logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		pushMode:   PushPaced,
		pushWindow: 100 * time.Millisecond,
		debounce:   100 * time.Millisecond,
		maxDelay:   10 * time.Second,
		address:    ":15010",
		keepalive: keepalive.ServerParameters{
			Time:    30 * time.Second,
			Timeout: 10 * time.Second,
		},
		enforcement: keepalive.EnforcementPolicy{
			MinTime:             15 * time.Second,
			PermitWithoutStream: true,
		},
		maxRecvMsg:       4 << 20,
		maxStreams:       100000,
		maxNames:         DefaultMaxSubscribedNames,
		retention:        5 * time.Minute,
		maxRetained:      1000,
		maxRetainedNames: DefaultMaxRetainedNames,
		shutdownGrace:    5 * time.Second,
		unansweredAfter:  10 * time.Second,
	}
}

// WithLogger sets the logger. Default: discard.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// PushMode is how the server spaces the pushes of changes that keep
// coming; see WithPushMode.
type PushMode string

const (
	// PushPaced pushes a change at once when no round of pushes went out
	// for a push window (WithPushWindow), and otherwise once the window
	// since the last round has passed: bursts coalesce, and under
	// sustained change a stream is pushed to at most once per window and a
	// change waits about a window at most. While changes keep coming
	// faster than three per window the window grows with the square root
	// of their rate, up to four windows (183ms at 100 changes a second and
	// 316ms at 300, at the default window), merging more pushes per
	// stream. It also widens (doubling, up to WithMaxDelay) while a
	// quarter or more of the streams a round wakes are still busy with
	// the previous one, and narrows again as they catch up. A stream that leaves a response unanswered holds its
	// next push until it answers, or ten windows after the response went
	// out (1s by default): a proxy that is behind is not sent more to
	// queue, and one slow proxy costs the others nothing. Responses to
	// requests are never held.
	PushPaced PushMode = "paced"
	// PushDebounce pushes once no change has come for the debounce period
	// (WithDebounce), or WithMaxDelay after the first change, whichever
	// comes sooner. Under sustained change every push waits for the cap.
	// It is the behaviour of istiod, and of this server before PushPaced.
	PushDebounce PushMode = "debounce"
)

// WithPushMode sets how pushes are spaced. New panics on a mode other
// than PushPaced and PushDebounce. Default: PushPaced.
func WithPushMode(m PushMode) Option { return func(o *options) { o.pushMode = m } }

// WithPushWindow sets, under PushPaced, the least time between two rounds
// of pushes: no stream is pushed to more often, and a change waits about
// that long at most while the streams keep up and changes come no faster
// than three a window (up to four windows under sustained churn; see
// PushPaced). 0 pushes every change batch at once. Default: 100ms.
func WithPushWindow(d time.Duration) Option { return func(o *options) { o.pushWindow = d } }

// WithDebounce sets, under PushDebounce, how long the server waits after a
// change for further changes before it pushes them together. 0 pushes
// every change batch at once. Default: 100ms.
func WithDebounce(d time.Duration) Option { return func(o *options) { o.debounce = d } }

// WithMaxDelay caps, under PushDebounce, how long a stream of changes
// arriving closer than the debounce period can delay a push, counted from
// the first change; 0 pushes at once, as WithDebounce(0) does. Under
// PushPaced it caps how far the push window widens while streams fall
// behind. Default: 10s.
func WithMaxDelay(d time.Duration) Option { return func(o *options) { o.maxDelay = d } }

// WithAddress sets the address Run listens on. Default: ":15010".
func WithAddress(addr string) Option { return func(o *options) { o.address = addr } }

// WithTLS serves over TLS with the certificate and key in the given PEM
// files. If clientCAFile is not empty, clients must present a certificate
// signed by a CA in it (mTLS). The files are read by Serve, which fails if
// they cannot be loaded. Default: plaintext.
func WithTLS(certFile, keyFile, clientCAFile string) Option {
	return func(o *options) { o.tlsFiles = &tlsFiles{certFile, keyFile, clientCAFile} }
}

// WithTLSConfig serves over TLS with the given configuration; it takes
// precedence over WithTLS. Default: plaintext.
func WithTLSConfig(c *tls.Config) Option { return func(o *options) { o.tlsConfig = c } }

// WithKeepalive sets the keepalive pings the server sends and the client
// pings it tolerates (a client pinging more often than ep.MinTime is
// disconnected). Default: ping after 30s idle, 10s timeout; clients may ping
// every 15s, also without active streams.
func WithKeepalive(kp keepalive.ServerParameters, ep keepalive.EnforcementPolicy) Option {
	return func(o *options) { o.keepalive, o.enforcement = kp, ep }
}

// WithMaxConnectionAge ends each client connection after about age (gRPC
// adds ±10% jitter) with a GOAWAY, then closes its streams after grace.
// Clients reconnect — through a load-balanced address, maybe to another
// replica — so connections spread over the replicas again after one has
// been down. A client that names what it holds on reconnecting is sent
// nothing it has, which makes this cheap. 0: never (the default). Give it
// after WithKeepalive, which replaces it.
func WithMaxConnectionAge(age, grace time.Duration) Option {
	return func(o *options) { o.keepalive.MaxConnectionAge, o.keepalive.MaxConnectionAgeGrace = age, grace }
}

// WithMaxMessageSize sets the largest request, in bytes, the server
// accepts. Responses are not limited. Default: 4 MiB.
func WithMaxMessageSize(n int) Option { return func(o *options) { o.maxRecvMsg = n } }

// WithMaxConcurrentStreams limits the streams of one connection. Default:
// 100000.
func WithMaxConcurrentStreams(n uint32) Option { return func(o *options) { o.maxStreams = n } }

// WithMaxConnections limits the connections served at once on each
// listener Serve serves; a connection
// beyond the limit is closed as soon as it is accepted, and its client
// retries with backoff. 0 means no limit. Default: 0.
func WithMaxConnections(n int) Option { return func(o *options) { o.maxConns = n } }

// DefaultMaxSubscribedNames is the default of WithMaxSubscribedNames.
const DefaultMaxSubscribedNames = 100000

// WithMaxSubscribedNames caps the resource names one stream (SotW or
// Delta) may hold subscribed, summed over its types: each explicit name
// counts one, and so does a wildcard subscription. A request that would
// take the stream beyond n ends it with ResourceExhausted, before any of
// the request is applied; the stream is logged and counted in
// Stats.LimitExceeded["subscribed_names"]. Delta subscriptions accumulate
// over requests, so without a cap a client could grow the server's memory
// without bound. 0 means no limit. Default: DefaultMaxSubscribedNames.
func WithMaxSubscribedNames(n int) Option { return func(o *options) { o.maxNames = n } }

// WithRetention sets how long the registry keeps a disconnected proxy, and
// how many disconnected proxies it keeps at most (the oldest go first).
// Default: 5 minutes, 1000.
func WithRetention(d time.Duration, max int) Option {
	return func(o *options) { o.retention, o.maxRetained = d, max }
}

// DefaultMaxRetainedNames is the default of WithMaxRetainedNames.
const DefaultMaxRetainedNames = 1 << 20

// WithMaxRetainedNames caps the resource names the disconnected proxies
// the registry keeps hold in all (subscribed or held, summed over their
// types); past it the oldest are dropped first, whatever WithRetention
// allows. Without it a client reconnecting in a loop, each stream
// subscribed to many names, would make the server keep them all for the
// retention period. Default: DefaultMaxRetainedNames (about 60 MiB of
// state at most).
func WithMaxRetainedNames(n int) Option { return func(o *options) { o.maxRetainedNames = n } }

// WithObserver sets an observer told of every push, ACK, NACK, connection
// and disconnection, for metrics. Default: none.
func WithObserver(obs Observer) Option { return func(o *options) { o.observer = obs } }

// WithGRPCServerOptions adds options to the gRPC server, after the
// server's own.
func WithGRPCServerOptions(opts ...grpc.ServerOption) Option {
	return func(o *options) { o.grpcOptions = append(o.grpcOptions, opts...) }
}

// WithServices registers more gRPC services on the server's grpc.Server,
// beside ADS, when Serve starts: they share its listener, TLS, keepalive
// and connection limits, and stop with it (meshd's CA signing API is one).
// Default: none.
func WithServices(register ...func(grpc.ServiceRegistrar)) Option {
	return func(o *options) { o.services = append(o.services, register...) }
}

// WithShutdownGrace sets how long Serve waits, once its context ends, for
// connections to finish before it closes them. Default: 5s.
func WithShutdownGrace(d time.Duration) Option { return func(o *options) { o.shutdownGrace = d } }

// WithUnansweredAfter sets how long a proxy may leave a response
// unanswered (no ACK or NACK) before the server logs a warning naming it
// and counts it in Stats.Unanswered, and ProxyStatus.Stale shows it; it
// logs again, at info, when the proxy answers. 0 turns the check off.
// Default: 10s.
func WithUnansweredAfter(d time.Duration) Option { return func(o *options) { o.unansweredAfter = d } }
