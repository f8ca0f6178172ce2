package xds

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// state writes what the named stream's session holds, or every stream's:
// one line per type, in push order, with only what is set.
func (h *harness) state(c command) (string, error) {
	names := h.order
	if len(c.args) > 0 {
		if h.streams[c.args[0]] == nil {
			return "", fmt.Errorf("no stream %s", c.args[0])
		}
		names = c.args[:1]
	}
	var out strings.Builder
	for _, name := range names {
		s := h.streams[name].s
		if len(s.types) == 0 {
			fmt.Fprintf(&out, "%s: no types\n", name)
		}
		for _, t := range s.order() {
			fmt.Fprintf(&out, "%s %s:%s\n", name, shortType(t), renderTypeState(s.types[t], s.pending[t]))
		}
	}
	return out.String(), nil
}

// renderTypeState shows a type's subscription, what the client holds,
// the last response and answer, and what is held back or pending.
func renderTypeState(ts *typeState, pending map[string]struct{}) string {
	var b strings.Builder
	field := func(cond bool, format string, args ...any) {
		if cond {
			fmt.Fprintf(&b, " "+format, args...)
		}
	}
	field(ts.wildcard, "wildcard")
	field(ts.names.len() > 0, "names=[%s]", strings.Join(ts.names.all(), " "))
	held := ts.sent.all()
	fmt.Fprintf(&b, " held=[%s] digest=%s", renderResources(held), shortVersion(ts.digest.String()))
	field(ts.nonce != "", "sent=%s", versionNonce(ts.version, ts.nonce))
	field(ts.ackedVersion != "", "acked=%s", versionNonce(ts.ackedVersion, ts.ackedNonce))
	awaiting := make([]string, len(ts.pending))
	for i, p := range ts.pending {
		awaiting[i] = p.nonce
	}
	field(len(awaiting) > 0, "awaiting=[%s]", strings.Join(awaiting, " "))
	field(ts.acks > 0, "acks=%d", ts.acks)
	field(ts.nacks > 0, "nacks=%d", ts.nacks)
	field(ts.lastNack != nil, "last-nack=%q", func() string {
		if ts.lastNack == nil {
			return ""
		}
		return ts.lastNack.Message
	}())
	field(len(ts.rejected) > 0, "rejected=[%s]", strings.Join(slices.Sorted(maps.Keys(ts.rejected)), " "))
	field(len(pending) > 0, "pending=[%s]", strings.Join(slices.Sorted(maps.Keys(pending)), " "))
	field(ts.resumed, "resumed")
	return b.String()
}

// versionNonce shows a response as version/nonce, or version alone for
// one a resuming client never received.
func versionNonce(version, nonce string) string {
	if nonce == "" {
		return shortVersion(version)
	}
	return shortVersion(version) + "/" + nonce
}
