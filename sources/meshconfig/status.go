package meshconfig

import (
	"log/slog"
	"sync"
	"time"
)

// Status says where the mesh config comes from and whether its last read
// was accepted, for logs and the debug UI.
type Status struct {
	// Source is the file path, or "configmap namespace/name".
	Source string `json:"source"`
	// Valid is false when the last read was rejected; the config in use is
	// then the last good one (Default if there was none).
	Valid bool `json:"valid"`
	// Error says why the last read was rejected.
	Error string `json:"error,omitempty"`
	// Loaded is when the config in use was accepted; zero for Default.
	Loaded time.Time `json:"loaded,omitzero"`
	// Loads counts accepted reads, Rejections rejected ones.
	Loads      uint64 `json:"loads"`
	Rejections uint64 `json:"rejections"`
}

// tracker keeps a Status and reports transitions to the log.
type tracker struct {
	logger *slog.Logger
	mu     sync.Mutex // guards status
	status Status
}

func (t *tracker) get() Status {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status
}

func (t *tracker) accepted(c MeshConfig) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.status.Valid, t.status.Error = true, ""
	t.status.Loaded = time.Now()
	t.status.Loads++
	t.logger.Info("mesh config loaded", "source", t.status.Source, "trustDomain", c.TrustDomain, "domainSuffix", c.DomainSuffix)
}

func (t *tracker) rejected(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.status.Valid, t.status.Error = false, err.Error()
	t.status.Rejections++
	t.logger.Error("mesh config rejected; keeping the last good one", "source", t.status.Source, "err", err)
}

// Option configures a mesh config source.
type Option func(*options)

type options struct {
	logger   *slog.Logger
	debounce time.Duration
	name     string
}

func buildOptions(opts []Option) options {
	o := options{logger: slog.New(slog.DiscardHandler), debounce: 100 * time.Millisecond, name: "meshconfig"}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithLogger sets the logger loads and rejections are reported to.
// Default: discard.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithDebounce sets how long a file source waits after a change for more
// before reading the file; a steady stream of changes is read at least
// every ten periods. Default: 100ms.
func WithDebounce(d time.Duration) Option { return func(o *options) { o.debounce = d } }

// WithName sets the singleton collection's name. Default: "meshconfig".
func WithName(name string) Option { return func(o *options) { o.name = name } }
