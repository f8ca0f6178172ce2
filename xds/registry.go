package xds

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
)

// ProxyStatus describes one stream, connected or recently disconnected.
// It is a plain value, safe to encode as JSON.
type ProxyStatus struct {
	// ID identifies the stream in this server (see ConfigDump).
	ID       uint64         `json:"id"`
	NodeID   string         `json:"nodeId"`
	Cluster  string         `json:"cluster,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
	// UserAgent is the client's user agent name and version.
	UserAgent string `json:"userAgent,omitempty"`
	// Variant is the client variant the stream is served
	// (WithClientVariants), "" for the base resources.
	Variant string     `json:"variant,omitempty"`
	Peer    string     `json:"peer,omitempty"`
	Kind    StreamKind `json:"kind"`
	// Identity is the authenticated identity of the stream: the SPIFFE ID
	// of the client certificate its connection's TLS handshake verified
	// (its subject when it holds no single SPIFFE ID); empty for a
	// plaintext or unverified client. CertificateExpiry is that
	// certificate's NotAfter.
	Identity          string    `json:"identity,omitempty"`
	CertificateExpiry time.Time `json:"certificateExpiry,omitzero"`

	ConnectedAt time.Time `json:"connectedAt"`
	// Connected is false once the stream ended, at DisconnectedAt, for
	// CloseReason, with the error it ended with (empty when the client
	// closed it).
	Connected      bool        `json:"connected"`
	DisconnectedAt time.Time   `json:"disconnectedAt,omitzero"`
	CloseReason    CloseReason `json:"closeReason,omitempty"`
	CloseError     string      `json:"closeError,omitempty"`
	// History holds the node id's other ended streams, newest first, at
	// most MaxSessions: a proxy that reconnected is one node id with a
	// history. Empty for a stream without a node id.
	History []Session `json:"history,omitempty"`

	// Types holds the stream's state per type URL.
	Types map[string]TypeStatus `json:"types"`
	// LastPush is the time of the last response of any type.
	LastPush time.Time `json:"lastPush,omitzero"`
	// Pending is the number of changed names waiting to be pushed.
	Pending int `json:"pending"`
	// Behind is set while the proxy does not hold the latest config: a
	// response is not answered yet or changes are pending. Stale is set
	// once a response has gone unanswered (neither ACK nor NACK) longer
	// than WithUnansweredAfter: the proxy is not keeping up, or is gone
	// without closing its stream. Rejecting is set when the last answer
	// of some type is a NACK.
	Behind    bool `json:"behind"`
	Stale     bool `json:"stale"`
	Rejecting bool `json:"rejecting"`
}

// TypeStatus is a stream's state for one type.
type TypeStatus struct {
	TypeURL  string `json:"typeUrl"`
	Wildcard bool   `json:"wildcard"`
	// Subscribed are the explicitly subscribed names, sorted.
	Subscribed []string `json:"subscribed,omitempty"`
	// Resources is the number of resources the client holds.
	Resources int `json:"resources"`
	// SentVersion and SentNonce identify the last response. A version
	// is a digest of the resources the client holds once it accepts the
	// response: equal versions mean equal content, on any server.
	SentVersion string    `json:"sentVersion,omitempty"`
	SentNonce   string    `json:"sentNonce,omitempty"`
	LastPush    time.Time `json:"lastPush,omitzero"`
	Pushes      uint64    `json:"pushes"`
	// AckedVersion and AckedNonce identify the last acknowledged response.
	AckedVersion string    `json:"ackedVersion,omitempty"`
	AckedNonce   string    `json:"ackedNonce,omitempty"`
	AckedAt      time.Time `json:"ackedAt,omitzero"`
	Acks         uint64    `json:"acks"`
	Nacks        uint64    `json:"nacks"`
	// Resumed is set when the stream's first request of the type showed
	// that the client already held the current resources (from an
	// earlier stream, maybe with another replica), so that none was sent:
	// SentVersion and AckedVersion are then the version it named, with no
	// nonce, and AckedAt the time of that request.
	Resumed bool `json:"resumed,omitempty"`
	// LastNack is the last NACK, if any.
	LastNack *Nack `json:"lastNack,omitempty"`
	// Rejected are the names held back at their last accepted version
	// since the client rejected their current one.
	Rejected []string `json:"rejected,omitempty"`
	Pending  int      `json:"pending"`
}

// Proxies returns every connected stream and the disconnected ones still
// retained (see WithRetention), ordered by ID. A node id's disconnected
// stream is left out while the node id has a connected one: it is in
// that stream's History.
func (s *Server) Proxies() []ProxyStatus {
	s.mu.Lock()
	s.pruneLocked(time.Now())
	conns := make([]*conn, 0, len(s.conns)+len(s.gone))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	conns = append(conns, s.gone...)
	s.mu.Unlock()
	out := make([]ProxyStatus, 0, len(conns))
	now := time.Now()
	for _, c := range conns {
		out = append(out, c.status(now))
	}
	s.addHistory(out)
	open := map[string]bool{}
	for _, p := range out {
		if p.Connected && p.NodeID != "" {
			open[p.NodeID] = true
		}
	}
	out = slices.DeleteFunc(out, func(p ProxyStatus) bool { return !p.Connected && open[p.NodeID] })
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Proxy returns the status of the stream with the given ID.
func (s *Server) Proxy(id uint64) (ProxyStatus, error) {
	c, err := s.find(id)
	if err != nil {
		return ProxyStatus{}, err
	}
	p := []ProxyStatus{c.status(time.Now())}
	s.addHistory(p)
	return p[0], nil
}

// addHistory sets each status's History. It takes the registry lock,
// which is never held with a conn's.
func (s *Server) addHistory(ps []ProxyStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range ps {
		ps[i].History = s.history.of(ps[i].NodeID, ps[i].ID)
	}
}

func (s *Server) find(id uint64) (*conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.conns[id]; c != nil {
		return c, nil
	}
	for _, c := range s.gone {
		if c.id == id {
			return c, nil
		}
	}
	return nil, fmt.Errorf("proxy %d: %w", id, ErrUnknownProxy)
}

func (c *conn) status(now time.Time) ProxyStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := ProxyStatus{
		ID:                c.id,
		Kind:              c.kind,
		Peer:              c.peer,
		Identity:          c.identity,
		CertificateExpiry: c.certExpiry,
		ConnectedAt:       c.connected,
		Connected:         c.disconnected.IsZero(),
		DisconnectedAt:    c.disconnected,
		CloseReason:       c.closeReason,
		CloseError:        c.closeErr,
		Variant:           c.s.variant,
		Types:             make(map[string]TypeStatus, len(c.s.types)),
	}
	if n := c.s.node; n != nil {
		p.NodeID, p.Cluster = n.GetId(), n.GetCluster()
		p.UserAgent = n.GetUserAgentName()
		if v := n.GetUserAgentVersion(); v != "" {
			p.UserAgent += "/" + v
		}
		if md := n.GetMetadata(); md != nil {
			p.Metadata = md.AsMap()
		}
	}
	for t, ts := range c.s.types {
		st := typeStatus(ts, len(c.s.pending[t]))
		if ts.lastNack != nil && ts.ackedAt.Before(ts.lastNack.Time) {
			p.Rejecting = true
		}
		if ts.lastPush.After(p.LastPush) {
			p.LastPush = ts.lastPush
		}
		if ts.nonce != "" && ts.nonce != ts.ackedNonce && (ts.lastNack == nil || ts.lastNack.Nonce != ts.nonce) {
			p.Behind = true
		}
		p.Pending += st.Pending
		p.Types[t] = st
	}
	if p.Pending > 0 {
		p.Behind = true
	}
	if after := c.srv.opts.unansweredAfter; after > 0 && p.Connected {
		oldest, ok := c.s.oldestUnanswered()
		p.Stale = ok && now.Sub(oldest) > after
	}
	return p
}

// typeStatus returns the status of one type of a stream, with pending
// names waiting.
func typeStatus(ts *typeState, pending int) TypeStatus {
	st := TypeStatus{
		TypeURL:      ts.typeURL,
		Wildcard:     ts.wildcard,
		Resources:    ts.sent.len(),
		SentVersion:  ts.version,
		SentNonce:    ts.nonce,
		LastPush:     ts.lastPush,
		Pushes:       ts.pushes,
		AckedVersion: ts.ackedVersion,
		AckedNonce:   ts.ackedNonce,
		AckedAt:      ts.ackedAt,
		Acks:         ts.acks,
		Nacks:        ts.nacks,
		Resumed:      ts.resumed,
		Pending:      pending,
	}
	st.Subscribed = append(st.Subscribed, ts.names.all()...) // sorted
	for n := range ts.rejected {
		st.Rejected = append(st.Rejected, n)
	}
	sort.Strings(st.Rejected)
	if ts.lastNack != nil {
		nk := *ts.lastNack
		st.LastNack = &nk
	}
	return st
}

// ConfigDump is the configuration a proxy holds: per type URL, the
// resources last sent to it and not rejected, as protojson, ordered by
// name.
type ConfigDump struct {
	ID     uint64                       `json:"id"`
	NodeID string                       `json:"nodeId"`
	Types  map[string][]json.RawMessage `json:"types"`
}

// ConfigDump returns the configuration held by the stream with the given
// ID. It returns ErrUnknownProxy if the registry does not hold it.
func (s *Server) ConfigDump(id uint64) (ConfigDump, error) {
	c, err := s.find(id)
	if err != nil {
		return ConfigDump{}, err
	}
	c.mu.Lock()
	d := ConfigDump{ID: c.id, NodeID: c.s.nodeID(), Types: map[string][]json.RawMessage{}}
	held := map[string][]*resource{}
	for t, ts := range c.s.types {
		held[t] = ts.held()
	}
	c.mu.Unlock()
	for t, rs := range held {
		out := make([]json.RawMessage, 0, len(rs))
		for _, r := range rs {
			m, err := r.message()
			if err != nil {
				return ConfigDump{}, fmt.Errorf("config dump of %s: %w", shortType(t), err)
			}
			b, err := protojson.Marshal(m)
			if err != nil {
				return ConfigDump{}, fmt.Errorf("config dump of %s %q: %w", shortType(t), r.name, err)
			}
			out = append(out, b)
		}
		d.Types[t] = out
	}
	return d, nil
}
