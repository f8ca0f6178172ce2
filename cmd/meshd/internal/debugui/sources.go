package debugui

import "time"

// Proxies is the view of the xDS server the Proxies tab shows. The binary
// adapts its xDS server's registry to it. Implementations must be safe for
// concurrent use; methods are called from request goroutines, every poll
// interval while an event stream is open, so they should be cheap.
type Proxies interface {
	// Proxies returns every proxy the server knows of: connected ones and
	// those recently disconnected, in a stable order (by node id, say).
	Proxies() []ProxyStatus
	// ConfigDump returns what the server last sent the proxy nodeID, as a
	// JSON-encodable value; proto messages are encoded with protojson.
	// When nodeID is unknown it returns an error wrapping ErrNotFound.
	ConfigDump(nodeID string) (any, error)
}

// ProxyState is the connection state of a proxy, as the xDS server sees it.
type ProxyState string

// The states a ProxyStatus reports.
const (
	// ProxyConnected: a stream is open.
	ProxyConnected ProxyState = "connected"
	// ProxyStale: a stream is open but the proxy has left a push
	// unanswered (neither ACK nor NACK) longer than the server's deadline;
	// meshd_xds_stale_proxies counts these.
	ProxyStale ProxyState = "stale"
	// ProxyDisconnected: the proxy's last stream has closed.
	ProxyDisconnected ProxyState = "disconnected"
)

// ProxyStatus is one proxy in the registry.
type ProxyStatus struct {
	NodeID   string            `json:"nodeId"`
	Cluster  string            `json:"cluster,omitempty"`
	Address  string            `json:"address,omitempty"`  // the peer's address
	Protocol string            `json:"protocol,omitempty"` // "sotw" or "delta"
	Metadata map[string]string `json:"metadata,omitempty"`
	// Variant is the client variant of the resources the proxy is sent
	// (chosen by its user agent), empty for the base resources.
	Variant string `json:"variant,omitempty"`

	// Identity is the proxy's authenticated identity: the SPIFFE ID of
	// the client certificate the xDS server verified on its connection;
	// empty for an anonymous proxy (plaintext, or TLS without a
	// certificate). CertificateExpiry is when that certificate expires.
	Identity          string    `json:"identity,omitempty"`
	CertificateExpiry time.Time `json:"certificateExpiry,omitzero"`
	// MTLSMode is the mutual TLS mode PeerAuthentication gives the
	// proxy's workload (STRICT, PERMISSIVE or DISABLE, with any port that
	// differs); empty when the node names no workload meshd knows.
	MTLSMode string `json:"mtlsMode,omitempty"`

	State          ProxyState `json:"state"`
	ConnectedSince time.Time  `json:"connectedSince,omitzero"`
	DisconnectedAt time.Time  `json:"disconnectedAt,omitzero"`
	// CloseReason says why the stream ended: "client closed", "client
	// cancelled", "transport closed", "keepalive timeout", "connection
	// age", "server shutdown", "refused" (then CloseError says why) or
	// "unknown"; empty while connected.
	CloseReason string `json:"closeReason,omitempty"`
	// CloseError is the error the stream ended with, e.g. a node naming
	// another namespace than its certificate; empty when the proxy closed
	// it, or while connected.
	CloseError string `json:"closeError,omitempty"`
	// History holds the proxy's earlier streams under the same node id,
	// newest first (the xDS server keeps the last ten).
	History       []Session `json:"history,omitempty"`
	LastPush      time.Time `json:"lastPush,omitzero"`
	PendingPushes int       `json:"pendingPushes,omitempty"`

	// Types holds one entry per resource type the proxy subscribed to.
	Types []TypeStatus `json:"types"`
}

// Session is one of a proxy's earlier streams, ended.
type Session struct {
	Protocol       string    `json:"protocol,omitempty"`
	Address        string    `json:"address,omitempty"`
	ConnectedSince time.Time `json:"connectedSince"`
	DisconnectedAt time.Time `json:"disconnectedAt"`
	CloseReason    string    `json:"closeReason"`
	CloseError     string    `json:"closeError,omitempty"`
}

// TypeStatus is a proxy's state for one resource type.
type TypeStatus struct {
	TypeURL  string `json:"typeUrl"`
	Wildcard bool   `json:"wildcard,omitempty"`
	// Subscribed lists the resource names subscribed to by name.
	Subscribed []string `json:"subscribed,omitempty"`

	SentVersion string `json:"sentVersion,omitempty"`
	SentNonce   string `json:"sentNonce,omitempty"`
	// Pushes counts the responses of this type sent on the stream.
	Pushes uint64 `json:"pushes"`
	// Resumed is set when the proxy reconnected holding this type's
	// current config (from this or another replica), so none was sent.
	Resumed      bool      `json:"resumed,omitempty"`
	AckedVersion string    `json:"ackedVersion,omitempty"`
	LastAck      time.Time `json:"lastAck,omitzero"`
	// LastNACK is the latest rejection of this type, kept after a later
	// ACK so that the UI can show what was rejected and why.
	LastNACK *NACK `json:"lastNack,omitempty"`
	// Rejected lists the resources the proxy holds at an older version
	// because it rejected their latest one.
	Rejected []string `json:"rejected,omitempty"`
}

// NACK is one rejection of a pushed config by a proxy.
type NACK struct {
	Time    time.Time `json:"time"`
	Version string    `json:"version,omitempty"` // the rejected version
	Nonce   string    `json:"nonce,omitempty"`
	Reason  string    `json:"reason"` // the proxy's error_detail message
}

// Verdict answers "is this proxy connected, up to date, or rejecting
// config?" in one word:
//
//   - "disconnected" or "stale": the proxy's State says so;
//   - "rejecting": for some type, the proxy's latest response was a NACK
//     (LastNACK is no older than LastAck), so it runs on an older config;
//   - "pending": for some type, a sent version is not yet acknowledged;
//   - "up-to-date" otherwise.
func (p ProxyStatus) Verdict() string {
	switch p.State {
	case ProxyDisconnected, ProxyStale:
		return string(p.State)
	}
	pending := false
	for _, t := range p.Types {
		if t.LastNACK != nil && !t.LastNACK.Time.Before(t.LastAck) {
			return "rejecting"
		}
		if t.SentVersion != t.AckedVersion {
			pending = true
		}
	}
	if pending {
		return "pending"
	}
	return "up-to-date"
}
