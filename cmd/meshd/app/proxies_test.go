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

func TestProxyViewStates(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	old, recent := now.Add(-time.Minute), now.Add(-time.Second)
	tests := []struct {
		name string
		p    xds.ProxyStatus
		want debugui.ProxyState
	}{
		{"acked", xds.ProxyStatus{Connected: true, Types: map[string]xds.TypeStatus{
			xds.ClusterType: {SentNonce: "1", AckedNonce: "1", LastPush: old}}}, debugui.ProxyConnected},
		{"push in flight", xds.ProxyStatus{Connected: true, Types: map[string]xds.TypeStatus{
			xds.ClusterType: {SentNonce: "2", AckedNonce: "1", LastPush: recent}}}, debugui.ProxyConnected},
		{"push unanswered for a minute", xds.ProxyStatus{Connected: true, Types: map[string]xds.TypeStatus{
			xds.ClusterType: {SentNonce: "2", AckedNonce: "1", LastPush: old}}}, debugui.ProxyStale},
		{"nacked is answered", xds.ProxyStatus{Connected: true, Types: map[string]xds.TypeStatus{
			xds.ClusterType: {SentNonce: "2", AckedNonce: "1", LastPush: old, LastNack: &xds.Nack{Nonce: "2", Message: "bad"}}}},
			debugui.ProxyConnected},
		{"gone", xds.ProxyStatus{Connected: false}, debugui.ProxyDisconnected},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.p.ID, tc.p.NodeID = 1, "n"
			v := proxyView{s: fakeRegistry{tc.p}, staleAfter: 10 * time.Second, now: func() time.Time { return now }}
			got := v.Proxies()
			if len(got) != 1 || got[0].State != tc.want {
				t.Fatalf("Proxies() = %+v, want state %s", got, tc.want)
			}
		})
	}
}

func TestProxyViewNack(t *testing.T) {
	nackAt := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	v := proxyView{s: fakeRegistry{{ID: 1, NodeID: "n", Connected: true, Types: map[string]xds.TypeStatus{
		xds.RouteType: {TypeURL: xds.RouteType, SentVersion: "v2", SentNonce: "2", AckedVersion: "v1", AckedNonce: "1",
			AckedAt: nackAt.Add(-time.Minute), LastNack: &xds.Nack{Nonce: "2", Version: "v1", Message: "no such cluster", Time: nackAt}},
	}}}, staleAfter: time.Second, now: func() time.Time { return nackAt }}
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
	}, staleAfter: time.Second, now: time.Now}
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
	}, now: time.Now, mtls: func(key string) (collections.WorkloadMTLS, bool) {
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
