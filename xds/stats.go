package xds

import (
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Observer is told of the server's events, for metrics. Its methods are
// called from stream goroutines, concurrently, and must not block.
type Observer interface {
	// Push is called after a response of typeURL holding resources
	// resources (and removals) of size bytes was sent; d is the time from
	// building the response to the end of the send.
	Push(typeURL string, resources, bytes int, d time.Duration)
	// Ack is called for each ACK of a response of typeURL.
	Ack(typeURL string)
	// Nack is called for each NACK of a response of typeURL.
	Nack(typeURL string)
	// Connect is called when a stream of the given kind starts.
	Connect(kind StreamKind)
	// Disconnect is called when a stream of the given kind ends.
	Disconnect(kind StreamKind)
}

// PushBounds are the upper bounds, in seconds, of the push duration
// buckets of Stats; the last bucket is +Inf.
var PushBounds = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Stats is a snapshot of the server's counters. Maps are keyed by short
// type name: "lds", "rds", "cds", "eds". Counters only grow.
type Stats struct {
	// ConnectedProxies is the number of open streams.
	ConnectedProxies int `json:"connectedProxies"`
	// Streams is the number of streams ever opened.
	Streams uint64 `json:"streams"`
	// CacheVersion is the graph version the served resources are at.
	CacheVersion uint64 `json:"cacheVersion"`
	// Resources is the number of resources served, per type.
	Resources map[string]int `json:"resources"`
	// Pushes is the number of responses sent, per type.
	Pushes map[string]uint64 `json:"pushes"`
	// ResourcesSent is the number of resources sent, per type.
	ResourcesSent map[string]uint64 `json:"resourcesSent"`
	// BytesSent is the serialized size of the resources sent, per type.
	BytesSent map[string]uint64 `json:"bytesSent"`
	// Acks and Nacks count the client's answers, per type.
	Acks  map[string]uint64 `json:"acks"`
	Nacks map[string]uint64 `json:"nacks"`
	// Resumed counts, per type, the streams whose first request showed
	// that the client already held the current resources — it named
	// their version on reconnecting, maybe from another replica — and so
	// got no response.
	Resumed map[string]uint64 `json:"resumed"`
	// Denied counts the names asked for explicitly that exist but are
	// hidden from the asking proxy's namespace, per type
	// (WithNamespaceIsolation).
	Denied map[string]uint64 `json:"denied"`
	// UnknownTypes counts the requests for a type URL the server does not
	// serve, which are ignored, per type URL. Type URLs are client input:
	// at most MaxUnknownTypeKeys distinct URLs are kept, each cut to its
	// first 128 bytes and made valid UTF-8, and requests for further ones
	// count under OtherType.
	UnknownTypes map[string]uint64 `json:"unknownTypes"`
	// LimitExceeded counts what a limit ended, per limit: streams ended
	// by LimitSubscribedNames or LimitMessageSize, connections closed by
	// LimitConnections.
	LimitExceeded map[string]uint64 `json:"limitExceeded"`
	// IdentityMismatch counts streams ended because the node named a
	// namespace other than its client certificate's (WithPeerNamespace).
	IdentityMismatch uint64 `json:"identityMismatch"`
	// Unauthenticated counts streams refused for want of a verified
	// client certificate (WithAnonymous).
	Unauthenticated uint64 `json:"unauthenticated"`
	// PushBuckets counts pushes per PushBounds bucket (the last is +Inf);
	// PushSeconds is their total duration.
	PushBuckets []uint64 `json:"pushBuckets"`
	PushSeconds float64  `json:"pushSeconds"`
	// ChangeRounds is the number of change rounds handed to streams (see
	// PushMode), ChangedNames the names they held, and NotifySeconds the
	// time spent finding the streams to wake.
	ChangeRounds  uint64  `json:"changeRounds"`
	ChangedNames  uint64  `json:"changedNames"`
	NotifySeconds float64 `json:"notifySeconds"`
	// PushWindowSeconds is, under PushPaced, the push window after the
	// last round: WithPushWindow's, or wider while streams fall behind.
	PushWindowSeconds float64 `json:"pushWindowSeconds"`
	// HeldPushes counts the wake-ups a stream held, under PushPaced,
	// because its proxy had not answered its last response.
	HeldPushes uint64 `json:"heldPushes"`
	// Unanswered counts the times a stream left a response unanswered
	// longer than WithUnansweredAfter.
	Unanswered uint64 `json:"unanswered"`
}

// Limits, the keys of Stats.LimitExceeded.
const (
	// LimitSubscribedNames is WithMaxSubscribedNames.
	LimitSubscribedNames = "subscribed_names"
	// LimitMessageSize is WithMaxMessageSize: gRPC ends a stream whose
	// request is larger, with ResourceExhausted.
	LimitMessageSize = "message_size"
	// LimitConnections is WithMaxConnections; it counts connections
	// closed as soon as accepted.
	LimitConnections = "connections"
)

// Limits are the limits Stats.LimitExceeded counts.
var Limits = []string{LimitSubscribedNames, LimitMessageSize, LimitConnections}

// MaxUnknownTypeKeys is the number of distinct unknown type URLs
// Stats.UnknownTypes keeps; OtherType counts the rest.
const MaxUnknownTypeKeys = 16

// OtherType is the key of Stats.UnknownTypes for the type URLs beyond
// MaxUnknownTypeKeys.
const OtherType = "other"

// maxTypeKeyLen bounds the length of a type URL kept as a key of
// Stats.UnknownTypes, since a request may carry one of megabytes.
const maxTypeKeyLen = 128

// counters backs Stats.
type counters struct {
	mu sync.Mutex // guards following
	s  Stats
}

func newCounters() *counters {
	return &counters{s: Stats{
		Pushes:        map[string]uint64{},
		ResourcesSent: map[string]uint64{},
		BytesSent:     map[string]uint64{},
		Acks:          map[string]uint64{},
		Nacks:         map[string]uint64{},
		Resumed:       map[string]uint64{},
		Denied:        map[string]uint64{},
		UnknownTypes:  map[string]uint64{},
		LimitExceeded: map[string]uint64{},
		PushBuckets:   make([]uint64, len(PushBounds)+1),
	}}
}

func (c *counters) push(typeURL string, n, bytes int, d time.Duration) {
	t := shortType(typeURL)
	secs := d.Seconds()
	b := len(PushBounds)
	for i, ub := range PushBounds {
		if secs <= ub {
			b = i
			break
		}
	}
	c.mu.Lock()
	c.s.Pushes[t]++
	c.s.ResourcesSent[t] += uint64(n)
	c.s.BytesSent[t] += uint64(bytes)
	c.s.PushBuckets[b]++
	c.s.PushSeconds += secs
	c.mu.Unlock()
}

func (c *counters) ack(typeURL string, nack bool) {
	c.mu.Lock()
	if nack {
		c.s.Nacks[shortType(typeURL)]++
	} else {
		c.s.Acks[shortType(typeURL)]++
	}
	c.mu.Unlock()
}

func (c *counters) resume(typeURL string) {
	c.mu.Lock()
	c.s.Resumed[shortType(typeURL)]++
	c.mu.Unlock()
}

func (c *counters) deny(typeURL string) {
	c.mu.Lock()
	c.s.Denied[shortType(typeURL)]++
	c.mu.Unlock()
}

// unknownType counts a request for a type the server does not serve.
func (c *counters) unknownType(typeURL string) {
	key := typeURL
	if len(key) > maxTypeKeyLen {
		// Cut at a character's start, not in its middle.
		i := maxTypeKeyLen
		for i > 0 && !utf8.RuneStart(key[i]) {
			i--
		}
		key = key[:i]
	}
	// Metric label values must be valid UTF-8.
	key = strings.ToValidUTF8(key, "?")
	c.mu.Lock()
	if _, ok := c.s.UnknownTypes[key]; !ok && len(c.s.UnknownTypes) >= MaxUnknownTypeKeys {
		key = OtherType
	}
	c.s.UnknownTypes[key]++
	c.mu.Unlock()
}

// limit counts something ended by the named limit.
func (c *counters) limit(name string) {
	c.mu.Lock()
	c.s.LimitExceeded[name]++
	c.mu.Unlock()
}

// identityMismatch counts a stream ended for naming another namespace
// than its certificate.
func (c *counters) identityMismatch() {
	c.mu.Lock()
	c.s.IdentityMismatch++
	c.mu.Unlock()
}

// unauthenticated counts a stream refused for having no certificate.
func (c *counters) unauthenticated() {
	c.mu.Lock()
	c.s.Unauthenticated++
	c.mu.Unlock()
}

func (c *counters) stream(delta int) {
	c.mu.Lock()
	c.s.ConnectedProxies += delta
	if delta > 0 {
		c.s.Streams++
	}
	c.mu.Unlock()
}

func (c *counters) unanswered() {
	c.mu.Lock()
	c.s.Unanswered++
	c.mu.Unlock()
}

func (c *counters) round(names int, d time.Duration) {
	c.mu.Lock()
	c.s.ChangeRounds++
	c.s.ChangedNames += uint64(names)
	c.s.NotifySeconds += d.Seconds()
	c.mu.Unlock()
}

func (c *counters) window(d time.Duration) {
	c.mu.Lock()
	c.s.PushWindowSeconds = d.Seconds()
	c.mu.Unlock()
}

func (c *counters) held() {
	c.mu.Lock()
	c.s.HeldPushes++
	c.mu.Unlock()
}

func (c *counters) snapshot() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.s
	s.Pushes = copyMap(s.Pushes)
	s.ResourcesSent = copyMap(s.ResourcesSent)
	s.BytesSent = copyMap(s.BytesSent)
	s.Acks = copyMap(s.Acks)
	s.Nacks = copyMap(s.Nacks)
	s.Resumed = copyMap(s.Resumed)
	s.Denied = copyMap(s.Denied)
	s.UnknownTypes = copyMap(s.UnknownTypes)
	s.LimitExceeded = copyMap(s.LimitExceeded)
	s.PushBuckets = append([]uint64(nil), s.PushBuckets...)
	return s
}

func copyMap(m map[string]uint64) map[string]uint64 {
	out := make(map[string]uint64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
