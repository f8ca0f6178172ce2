package security

import (
	"io"
	"log/slog"
	"time"
)

// Option configures an Authority.
type Option func(*options)

type options struct {
	logger      *slog.Logger
	leafTTL     time.Duration
	maxCSRBytes int
	rootTTL     time.Duration
	rotation    RotationPolicy
	reload      time.Duration
	now         func() time.Time
}

// Defaults of an Authority.
const (
	DefaultLeafTTL = 24 * time.Hour
	// DefaultReload is how often Run rereads the store.
	DefaultReload = time.Minute
)

func defaultOptions() options {
	return options{
		logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		leafTTL:     DefaultLeafTTL,
		maxCSRBytes: DefaultMaxCSRBytes,
		rootTTL:     DefaultRootValidity,
		reload:      DefaultReload,
		now:         time.Now,
	}
}

// policy is the rotation policy, defaults filled from the leaf TTL: a
// new root propagates for one leaf TTL (two renewals at half life), and
// rotation starts a year before the root ends, or at a tenth of its life
// left for a short-lived root.
func (o options) policy() RotationPolicy {
	p := o.rotation
	if p.LeafTTL == 0 {
		p.LeafTTL = o.leafTTL
	}
	if p.Propagation == 0 {
		p.Propagation = p.LeafTTL
	}
	if p.Before == 0 {
		p.Before = min(365*24*time.Hour, o.rootTTL/10)
	}
	return p
}

// WithLogger logs the authority's events (roots created, loaded,
// rotated) to l. Default: discard.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithLeafTTL sets the validity of leaves. Default: DefaultLeafTTL (24h).
func WithLeafTTL(d time.Duration) Option { return func(o *options) { o.leafTTL = d } }

// WithMaxCSRBytes sets the largest CSR PEM accepted. Default:
// DefaultMaxCSRBytes.
func WithMaxCSRBytes(n int) Option { return func(o *options) { o.maxCSRBytes = n } }

// WithRootTTL sets the validity of generated roots. Default:
// DefaultRootValidity (10 years).
func WithRootTTL(d time.Duration) Option { return func(o *options) { o.rootTTL = d } }

// WithRotation sets the rotation policy; zero fields take their defaults
// (see RotationPolicy): LeafTTL the leaf TTL, Propagation the leaf TTL,
// Before a year or a tenth of the root's life, whichever is less.
func WithRotation(p RotationPolicy) Option { return func(o *options) { o.rotation = p } }

// WithReload sets how often Run rereads the store, to follow a rotation
// another replica started. Default: DefaultReload (1m).
func WithReload(d time.Duration) Option { return func(o *options) { o.reload = d } }

// WithClock makes the authority read the time from now, for tests.
// Default: time.Now.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }
