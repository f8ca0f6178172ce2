package app

import (
	"errors"
	"testing"
	"time"

	"github.com/meshd/meshd/cmd/meshd/internal/debugui"
	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/xds"
)

type fakeRegistry []xds.ProxyStatus

func (f fakeRegistry) Proxies() []xds.ProxyStatus { return f }
func (f fakeRegistry) ConfigDump(id uint64) (xds.ConfigDump, error) {
	for _, p := range f {
		if p.ID == id {
			return xds.ConfigDump{ID: id, NodeID: p.NodeID}, nil
		}
	}
	return xds.ConfigDump{}, xds.ErrUnknownProxy
}

// TestProxyViewStates: the UI's state is the registry's, stale included
// (what meshd_xds_stale_proxies counts): a proxy merely behind is
// connected.
func TestProxyViewStates(t *testing.T) {
	tests := []struct {
		name string
		p    xds.ProxyStatus
		want debugui.ProxyState
	}{
		{"acked", xds.ProxyStatus{Connected: true, Types: map[string]xds.TypeStatus{
			xds.ClusterType: {SentNonce: "1", AckedNonce: "1"}}}, debugui.ProxyConnected},
		{"push in flight", xds.ProxyStatus{Connected: true, Behind: true, Types: map[string]xds.TypeStatus{
			xds.ClusterType: {SentNonce: "2", AckedNonce: "1"}}}, debugui.ProxyConnected},
		{"push unanswered too long", xds.ProxyStatus{Connected: true, Behind: true, Stale: true, Types: map[string]xds.TypeStatus{
			xds.ClusterType: {SentNonce: "2", AckedNonce: "1"}}}, debugui.ProxyStale},
		{"gone", xds.ProxyStatus{Connected: false}, debugui.ProxyDisconnected},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.p.ID, tc.p.NodeID = 1, "n"
			v := proxyView{s: fakeRegistry{tc.p}}
			got := v.Proxies()
			if len(got) != 1 || got[0].State != tc.want {
				t.Fatalf("Proxies() = %+v, want state %s", got, tc.want)
			}
		})
	}
}

// TestProxyViewHistory: why a stream ended, and the node's earlier
// streams, reach the UI; a close error only where it adds to the reason.
func TestProxyViewHistory(t *testing.T) {
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	v := proxyView{s: fakeRegistry{{ID: 3, NodeID: "n", CloseReason: xds.CloseKeepaliveTimeout, History: []xds.Session{
		{ID: 2, Kind: xds.Delta, Peer: "127.0.0.1:5", ConnectedAt: at, DisconnectedAt: at.Add(time.Minute), CloseReason: xds.CloseRefused, CloseError: "rpc error: limit"},
		{ID: 1, Kind: xds.SotW, CloseReason: xds.CloseClientCancelled, CloseError: "context canceled"},
	}}}}
	p := v.Proxies()[0]
	if p.CloseReason != "keepalive timeout" || len(p.History) != 2 {
		t.Fatalf("proxy = %+v; want its close reason and two earlier streams", p)
	}
	want := debugui.Session{Protocol: "delta", Address: "127.0.0.1:5", ConnectedSince: at, DisconnectedAt: at.Add(time.Minute), CloseReason: "refused", CloseError: "rpc error: limit"}
	// A cancel's "context canceled" says nothing the reason does not.
	if p.History[0] != want || p.History[1].CloseReason != "client cancelled" || p.History[1].CloseError != "" {
		t.Errorf("history = %+v; want %+v first", p.History, want)
	}
}

func TestProxyViewNack(t *testing.T) {
	nackAt := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	v := proxyView{s: fakeRegistry{{ID: 1, NodeID: "n", Connected: true, Types: map[string]xds.TypeStatus{
		xds.RouteType: {TypeURL: xds.RouteType, SentVersion: "v2", SentNonce: "2", AckedVersion: "v1", AckedNonce: "1",
			AckedAt: nackAt.Add(-time.Minute), LastNack: &xds.Nack{Nonce: "2", Version: "v1", Message: "no such cluster", Time: nackAt}},
	}}}}
	p := v.Proxies()[0]
	if len(p.Types) != 1 || p.Types[0].LastNACK == nil || p.Types[0].LastNACK.Reason != "no such cluster" {
		t.Fatalf("types = %+v", p.Types)
	}
	if verdict := p.Verdict(); verdict != "rejecting" {
		t.Errorf("verdict = %q, want rejecting", verdict)
	}
}

func TestProxyViewIDs(t *testing.T) {
	v := proxyView{s: fakeRegistry{
		{ID: 1, NodeID: "sidecar~a"},
		{ID: 4, NodeID: "sidecar~a", Connected: true},
		{ID: 5, NodeID: ""},
	}}
	var ids []string
	for _, p := range v.Proxies() {
		ids = append(ids, p.NodeID)
	}
	want := []string{"sidecar~a", "sidecar~a#1", "stream-5"}
	if len(ids) != len(want) {
		t.Fatalf("ids = %v, want %v", ids, want)
	}
	for i := range want {
		if ids[i] != want[i] {
			t.Fatalf("ids = %v, want %v", ids, want)
		}
	}
	tests := []struct {
		id     string
		stream uint64
	}{
		{"sidecar~a", 4},
		{"sidecar~a#1", 1},
		{"stream-5", 5},
	}
	for _, tc := range tests {
		d, err := v.ConfigDump(tc.id)
		if err != nil {
			t.Fatalf("ConfigDump(%q): %v", tc.id, err)
		}
		if got := d.(xds.ConfigDump).ID; got != tc.stream {
			t.Errorf("ConfigDump(%q) is stream %d, want %d", tc.id, got, tc.stream)
		}
	}
	if _, err := v.ConfigDump("nobody"); !errors.Is(err, debugui.ErrNotFound) {
		t.Errorf("ConfigDump(unknown) err = %v, want debugui.ErrNotFound", err)
	}
}

// TestProxyViewIdentity: the registry's authenticated identity, its
// certificate's expiry and why the stream ended reach the UI, with the
// mTLS mode of the workload an Istio-style node id names.
func TestProxyViewIdentity(t *testing.T) {
	expires := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	const id = "spiffe://cluster.local/ns/shop/sa/echo"
	v := proxyView{s: fakeRegistry{
		{ID: 1, NodeID: "sidecar~10.0.0.1~echo-0.shop~shop.svc.cluster.local", Identity: id, CertificateExpiry: expires, CloseError: "refused"},
		{ID: 2, NodeID: "stranger", Connected: true},
	}, mtls: func(key string) (collections.WorkloadMTLS, bool) {
		if key != "shop/echo-0" {
			return collections.WorkloadMTLS{}, false
		}
		return collections.WorkloadMTLS{Mode: collections.MTLSStrict, Ports: map[uint32]collections.MTLSMode{8080: collections.MTLSPermissive}}, true
	}}
	got := v.Proxies()
	if len(got) != 2 {
		t.Fatalf("Proxies() = %+v", got)
	}
	echo, stranger := got[0], got[1]
	if echo.Identity != id || !echo.CertificateExpiry.Equal(expires) || echo.CloseError != "refused" ||
		echo.MTLSMode != "STRICT, port 8080: PERMISSIVE" {
		t.Errorf("echo shown as %+v", echo)
	}
	if stranger.Identity != "" || stranger.MTLSMode != "" || !stranger.CertificateExpiry.IsZero() {
		t.Errorf("anonymous proxy of no known workload shown as %+v", stranger)
	}
}
