package app

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/meshd/meshd/cmd/meshd/internal/debugui"
	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/xds"
)

// proxyRegistry is what proxyView reads; *xds.Server implements it.
type proxyRegistry interface {
	Proxies() []xds.ProxyStatus
	ConfigDump(id uint64) (xds.ConfigDump, error)
}

// proxyView adapts the xDS server's registry, which is keyed by stream, to
// the debug UI's, which is keyed by node id.
type proxyView struct {
	s proxyRegistry
	// mtls returns the mTLS mode of the workload "namespace/name"; nil:
	// none known.
	mtls func(key string) (collections.WorkloadMTLS, bool)
}

// Proxies implements debugui.Proxies. A proxy that reconnected is one
// entry, its earlier streams in its history (the registry lists a node
// id's ended stream only while it has no open one). A node id held by
// several open streams is shown as "<node>#<stream>" for all but its
// latest stream, so every entry has an id of its own; an empty node id
// shows as "stream-<id>".
func (v proxyView) Proxies() []debugui.ProxyStatus {
	ps := v.s.Proxies()
	latest := map[string]uint64{}
	for _, p := range ps {
		if p.ID > latest[p.NodeID] {
			latest[p.NodeID] = p.ID
		}
	}
	out := make([]debugui.ProxyStatus, 0, len(ps))
	for _, p := range ps {
		id := p.NodeID
		switch {
		case id == "":
			id = "stream-" + strconv.FormatUint(p.ID, 10)
		case latest[id] != p.ID:
			id += "#" + strconv.FormatUint(p.ID, 10)
		}
		out = append(out, v.convert(id, p))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].NodeID < out[j].NodeID })
	return out
}

func (v proxyView) convert(id string, p xds.ProxyStatus) debugui.ProxyStatus {
	s := debugui.ProxyStatus{
		NodeID:            id,
		Cluster:           p.Cluster,
		Address:           p.Peer,
		Protocol:          string(p.Kind),
		Variant:           p.Variant,
		Identity:          p.Identity,
		CertificateExpiry: p.CertificateExpiry,
		MTLSMode:          v.mtlsMode(p.NodeID),
		State:             debugui.ProxyConnected,
		ConnectedSince:    p.ConnectedAt,
		DisconnectedAt:    p.DisconnectedAt,
		CloseReason:       string(p.CloseReason),
		CloseError:        closeError(p.CloseReason, p.CloseError),
		History:           sessions(p.History),
		LastPush:          p.LastPush,
		PendingPushes:     p.Pending,
		Types:             convertTypes(p.Types),
		Metadata:          proxyMetadata(p),
	}
	sort.Slice(s.Types, func(i, j int) bool { return s.Types[i].TypeURL < s.Types[j].TypeURL })
	switch {
	case !p.Connected:
		s.State = debugui.ProxyDisconnected
	case p.Stale:
		// The registry's stale, which meshd_xds_stale_proxies counts.
		s.State = debugui.ProxyStale
	}
	return s
}

// sessions converts a proxy's earlier streams; nil for none.
func sessions(h []xds.Session) []debugui.Session {
	var out []debugui.Session
	for _, s := range h {
		out = append(out, debugui.Session{
			Protocol: string(s.Kind), Address: s.Peer,
			ConnectedSince: s.ConnectedAt, DisconnectedAt: s.DisconnectedAt,
			CloseReason: string(s.CloseReason), CloseError: closeError(s.CloseReason, s.CloseError),
		})
	}
	return out
}

// closeError is the error a stream ended with, as the UI shows it: none
// where the reason says it all ("context canceled" for a client's
// cancel, Unavailable for a shutdown).
func closeError(reason xds.CloseReason, err string) string {
	switch reason {
	case xds.CloseClientClosed, xds.CloseClientCancelled, xds.CloseServerShutdown, xds.CloseConnectionAge, xds.CloseKeepaliveTimeout:
		return ""
	}
	return err
}

// convertTypes converts a proxy's per-type states.
func convertTypes(types map[string]xds.TypeStatus) []debugui.TypeStatus {
	out := make([]debugui.TypeStatus, 0, len(types))
	for _, t := range types {
		ts := debugui.TypeStatus{
			TypeURL:      t.TypeURL,
			Wildcard:     t.Wildcard,
			Subscribed:   t.Subscribed,
			SentVersion:  t.SentVersion,
			SentNonce:    t.SentNonce,
			Pushes:       t.Pushes,
			Resumed:      t.Resumed,
			AckedVersion: t.AckedVersion,
			LastAck:      t.AckedAt,
			Rejected:     t.Rejected,
		}
		if n := t.LastNack; n != nil {
			ts.LastNACK = &debugui.NACK{Time: n.Time, Version: n.Version, Nonce: n.Nonce, Reason: n.Message}
		}
		out = append(out, ts)
	}
	return out
}

// mtlsMode shows the mTLS mode of the workload a node id names: an
// Istio-style id's "<pod>.<namespace>" field, or the id itself in that
// form; port-level modes that differ follow.
func (v proxyView) mtlsMode(nodeID string) string {
	if v.mtls == nil {
		return ""
	}
	if parts := strings.Split(nodeID, "~"); len(parts) == 4 {
		nodeID = parts[2]
	}
	name, ns, ok := strings.Cut(nodeID, ".")
	if !ok {
		return ""
	}
	w, ok := v.mtls(ns + "/" + name)
	if !ok {
		return ""
	}
	mode := string(w.Mode)
	ports := slices.Sorted(maps.Keys(w.Ports))
	for _, port := range ports {
		mode += fmt.Sprintf(", port %d: %s", port, w.Ports[port])
	}
	return mode
}

// proxyMetadata is what the UI shows of p's node metadata, redacted,
// with its user agent under "userAgent"; nil for none.
func proxyMetadata(p xds.ProxyStatus) map[string]string {
	var md map[string]string
	if len(p.Metadata) > 0 {
		md = make(map[string]string, len(p.Metadata))
		for k, val := range p.Metadata {
			md[k] = metadataValue(k, val)
		}
	}
	if p.UserAgent != "" {
		if md == nil {
			md = map[string]string{}
		}
		md["userAgent"] = p.UserAgent
	}
	return md
}

// metadataValue shows one field of a proxy's node metadata: proxies put
// tokens and credentials there, so the value under a sensitive key, and
// anything that looks like a credential at any depth, is redacted
// (debugui.RedactTree) before it leaves for the UI. Strings show as they
// are, nested values as JSON.
func metadataValue(key string, v any) string {
	if debugui.SensitiveKey(key) {
		return debugui.Redacted
	}
	v = debugui.RedactTree(v)
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		// AsMap yields only JSON values; this is not reached.
		return debugui.Redacted
	}
	return string(b)
}

// ConfigDump implements debugui.Proxies: id is a node id as Proxies shows
// it; the dump is that of its latest stream.
func (v proxyView) ConfigDump(id string) (any, error) {
	var stream uint64
	if i := strings.LastIndexByte(id, '#'); i >= 0 {
		if n, err := strconv.ParseUint(id[i+1:], 10, 64); err == nil {
			stream = n
		}
	}
	if n, ok := strings.CutPrefix(id, "stream-"); ok && stream == 0 {
		stream, _ = strconv.ParseUint(n, 10, 64)
	}
	if stream == 0 {
		for _, p := range v.s.Proxies() {
			if p.NodeID == id && p.ID > stream {
				stream = p.ID
			}
		}
	}
	if stream == 0 {
		return nil, fmt.Errorf("proxy %q: %w", id, debugui.ErrNotFound)
	}
	d, err := v.s.ConfigDump(stream)
	if err != nil {
		return nil, fmt.Errorf("proxy %q: %w: %w", id, debugui.ErrNotFound, err)
	}
	return d, nil
}
