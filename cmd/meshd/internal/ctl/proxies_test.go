package ctl

import (
	"strings"
	"testing"
	"time"

	"github.com/meshd/meshd/cmd/meshd/internal/debugui"
	"github.com/meshd/meshd/xds"
)

// TestWriteProxies: a proxy that reconnected is one row with its earlier
// connections and why each closed; a disconnected one says why it
// closed; each type lists its subscribed names, a long list cut short.
func TestWriteProxies(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	var many []string
	for _, c := range "abcdefghij" {
		many = append(many, string(c))
	}
	ps := []debugui.ProxyEntry{
		{Verdict: "up-to-date", ProxyStatus: debugui.ProxyStatus{
			NodeID: "flapping", State: debugui.ProxyConnected, Protocol: "sotw", Address: "127.0.0.1:3", ConnectedSince: now.Add(-time.Minute),
			History: []debugui.Session{
				{Protocol: "sotw", Address: "127.0.0.1:2", DisconnectedAt: now.Add(-2 * time.Minute), CloseReason: "keepalive timeout"},
				{Protocol: "delta", Address: "127.0.0.1:1", DisconnectedAt: now.Add(-time.Hour), CloseReason: "refused", CloseError: "over the limit"},
			},
			Types: []debugui.TypeStatus{{TypeURL: xds.ListenerType, Subscribed: []string{"web:80", "db:5432"}}, {TypeURL: xds.EndpointType, Subscribed: many}},
		}},
		{Verdict: "disconnected", ProxyStatus: debugui.ProxyStatus{
			NodeID: "gone", State: debugui.ProxyDisconnected, DisconnectedAt: now.Add(-time.Second), CloseReason: "client cancelled",
		}},
	}
	var b strings.Builder
	if err := writeProxies(&b, ps, now); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// Columns align with runs of spaces; compare words.
	words := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{
		"earlier keepalive timeout, ended 2m0s ago (sotw 127.0.0.1:2)",
		"refused: over the limit, ended 1h0m0s ago (delta 127.0.0.1:1)",
		"2 names: web:80 db:5432",
		"10 names: a b c d e f g h … (2 more)",
		"gone disconnected disconnected 1s ago closed client cancelled",
	} {
		if !strings.Contains(words, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "flapping"); n != 1 {
		t.Errorf("flapping shows on %d lines, want 1:\n%s", n, out)
	}
}
