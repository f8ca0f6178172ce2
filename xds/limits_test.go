package xds_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest"
)

// edsNames returns the names e0 .. e<n-1>.
func edsNames(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("e%d", i))
	}
	return out
}

// limitFixture serves 12 load assignments e0..e11 and 2 clusters c0, c1,
// with at most 10 subscribed names per stream.
func limitFixture(t *testing.T, opts ...xds.Option) *fixture {
	t.Helper()
	f := newFixture(t, append([]xds.Option{xds.WithMaxSubscribedNames(10)}, opts...)...)
	for _, n := range edsNames(0, 12) {
		f.eds.Set(cla(n, "10.0.0.1:80"))
	}
	f.cds.Set(edsCluster("c0"), edsCluster("c1"))
	return f
}

// wantExhausted checks that err is ResourceExhausted naming the limit and
// the count the request would have reached.
func wantExhausted(t *testing.T, err error, count int) {
	t.Helper()
	st, _ := status.FromError(err)
	if st.Code() != codes.ResourceExhausted {
		t.Fatalf("stream ended with %v, want ResourceExhausted", err)
	}
	for _, want := range []string{fmt.Sprintf("%d resource names", count), "limit of 10", xds.LimitSubscribedNames} {
		if !strings.Contains(st.Message(), want) {
			t.Errorf("message %q does not say %q", st.Message(), want)
		}
	}
}

// lastProxy returns the registry's last stream of node, connected or not.
func lastProxy(t *testing.T, s *xds.Server, node string) xds.ProxyStatus {
	t.Helper()
	var found *xds.ProxyStatus
	for _, p := range s.Proxies() {
		if p.NodeID == node {
			found = &p
		}
	}
	if found == nil {
		t.Fatalf("proxy %s not in registry", node)
	}
	return *found
}

// subscribedCount returns what a proxy holds subscribed, per the limit's
// count: explicit names, and one per wildcard.
func subscribedCount(p xds.ProxyStatus) int {
	n := 0
	for _, ts := range p.Types {
		n += len(ts.Subscribed)
		if ts.Wildcard {
			n++
		}
	}
	return n
}

// TestMaxSubscribedNamesDelta subscribes Delta streams, in several
// requests, up to the limit (served) and beyond it (ended with
// ResourceExhausted, the request not applied), and checks the other
// streams are unaffected.
func TestMaxSubscribedNamesDelta(t *testing.T) {
	f := limitFixture(t)
	cc := dial(t, f.addr)

	// At the limit: the CDS wildcard counts one, a name repeated in a
	// request once, and an unsubscribed name frees its place.
	ok := xdstest.NewDelta(t, cc, &corev3.Node{Id: "at-limit"})
	ok.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.ClusterType, ResourceNamesSubscribe: []string{"*"}})
	if got := sorted(deltaNames(t, ok.Recv())); !slices.Equal(got, []string{"c0", "c1"}) {
		t.Fatalf("wildcard CDS: %v", got)
	}
	steps := []struct {
		sub, unsub, want []string
	}{
		{sub: append(edsNames(0, 5), "e0", "e1", "e1"), want: edsNames(0, 5)},    // 6
		{sub: edsNames(5, 8), unsub: []string{"e0", "e0"}, want: edsNames(5, 8)}, // 8
		// e1 unsubscribed and subscribed again in one request stays, and
		// is sent again.
		{sub: []string{"e8", "e9", "e1"}, unsub: []string{"e1"}, want: []string{"e1", "e8", "e9"}}, // 10
	}
	for i, s := range steps {
		ok.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNamesSubscribe: s.sub, ResourceNamesUnsubscribe: s.unsub})
		if got := sorted(deltaNames(t, ok.Recv())); !slices.Equal(got, s.want) {
			t.Fatalf("step %d: got %v, want %v", i, got, s.want)
		}
	}

	// Beyond it: 6 + 2, then 3 more.
	over := xdstest.NewDelta(t, cc, &corev3.Node{Id: "over"})
	over.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNamesSubscribe: edsNames(0, 6)})
	over.Recv()
	over.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.ClusterType, ResourceNamesSubscribe: []string{"c0", "c1"}})
	over.Recv()
	over.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNamesSubscribe: edsNames(6, 9)})
	wantExhausted(t, over.Ended(), 11)

	if got := f.srv.Stats().LimitExceeded[xds.LimitSubscribedNames]; got != 1 {
		t.Errorf("LimitExceeded[%s] = %d, want 1", xds.LimitSubscribedNames, got)
	}
	p := lastProxy(t, f.srv, "over")
	if p.Connected || !strings.Contains(p.CloseError, "ResourceExhausted") {
		t.Errorf("proxy over: connected %v, close error %q", p.Connected, p.CloseError)
	}
	if n := subscribedCount(p); n != 8 {
		t.Errorf("proxy over holds %d names, want the 8 from before the refused request", n)
	}

	// The stream at the limit is still served.
	f.eds.Set(cla("e9", "10.0.0.2:80"))
	if got := deltaNames(t, ok.Recv()); !slices.Equal(got, []string{"e9"}) {
		t.Errorf("after the other stream ended: %v", got)
	}
	if n := subscribedCount(proxyByNode(t, f.srv, "at-limit")); n != 10 {
		t.Errorf("proxy at-limit holds %d names, want 10", n)
	}
}

// TestMaxSubscribedNamesSotW: SotW requests replace a type's names, so
// the limit applies to the sum of the current sets.
func TestMaxSubscribedNamesSotW(t *testing.T) {
	f := limitFixture(t)
	cc := dial(t, f.addr)

	ok := xdstest.NewSotW(t, cc, &corev3.Node{Id: "at-limit"})
	ok.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType}) // legacy wildcard: 1
	// The server's cache may catch up with the fixture's clusters after
	// the first answer: wait for both.
	for r := ok.Recv(); !slices.Equal(sorted(names(t, r)), []string{"c0", "c1"}); r = ok.Recv() {
	}
	ok.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: edsNames(0, 9)}) // 10
	if got := sorted(names(t, ok.Recv())); !slices.Equal(got, sorted(edsNames(0, 9))) {
		t.Fatalf("EDS: %v", got)
	}

	over := xdstest.NewSotW(t, cc, &corev3.Node{Id: "over"})
	over.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: edsNames(0, 8)}) // 8
	over.Recv()
	// Replacing the 8 by 7 others stays within the limit.
	over.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: edsNames(5, 12)}) // 7
	if got := sorted(names(t, over.Recv())); !slices.Equal(got, sorted(edsNames(8, 12))) {
		t.Fatalf("EDS replaced: %v", got)
	}
	over.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType, ResourceNames: []string{"c0", "c1", "c2"}}) // 10
	over.Recv()
	over.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType, ResourceNames: []string{"c0", "c1", "c2", "*"}})
	wantExhausted(t, over.Ended(), 11)

	if got := f.srv.Stats().LimitExceeded[xds.LimitSubscribedNames]; got != 1 {
		t.Errorf("LimitExceeded[%s] = %d, want 1", xds.LimitSubscribedNames, got)
	}
	if n := subscribedCount(lastProxy(t, f.srv, "over")); n != 10 {
		t.Errorf("proxy over holds %d names, want 10", n)
	}
	f.eds.Set(cla("e3", "10.0.0.2:80"))
	if got := names(t, ok.Recv()); !slices.Equal(got, []string{"e3"}) {
		t.Errorf("after the other stream ended: %v", got)
	}
}

// TestMaxSubscribedNamesOff: 0 lifts the limit.
func TestMaxSubscribedNamesOff(t *testing.T) {
	f := newFixture(t, xds.WithMaxSubscribedNames(0))
	d := xdstest.NewDelta(t, dial(t, f.addr), &corev3.Node{Id: "many"})
	for i := range 3 {
		d.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNamesSubscribe: edsNames(i*50000, (i+1)*50000)})
	}
	f.eds.Set(cla("e149999", "10.0.0.1:80"))
	if got := deltaNames(t, d.Recv()); !slices.Equal(got, []string{"e149999"}) {
		t.Fatalf("got %v", got)
	}
	if n := subscribedCount(proxyByNode(t, f.srv, "many")); n != 150000 {
		t.Errorf("holds %d names, want 150000", n)
	}
}

// TestMaxMessageSizeCounted: a request over WithMaxMessageSize ends the
// stream with ResourceExhausted, and is counted.
func TestMaxMessageSizeCounted(t *testing.T) {
	f := newFixture(t, xds.WithMaxMessageSize(1024))
	f.eds.Set(cla("a", "10.0.0.1:80"))
	cc := dial(t, f.addr)
	s := xdstest.NewSotW(t, cc, &corev3.Node{Id: "big"})
	s.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{strings.Repeat("x", 2048)}})
	if err := s.Ended(); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("stream ended with %v, want ResourceExhausted", err)
	}
	// gRPC sends the status from inside the server's Recv, before the
	// stream's receive goroutine counts it: the client may be told first.
	waitFor(t, "the refused request counted", func() bool {
		return f.srv.Stats().LimitExceeded[xds.LimitMessageSize] > 0
	})
	st := f.srv.Stats()
	if got := st.LimitExceeded[xds.LimitMessageSize]; got != 1 {
		t.Errorf("LimitExceeded = %v, want %s 1", st.LimitExceeded, xds.LimitMessageSize)
	}
	// A request within the size is served on another stream.
	ok := xdstest.NewSotW(t, cc, &corev3.Node{Id: "small"})
	ok.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{"a"}})
	if got := names(t, ok.Recv()); !slices.Equal(got, []string{"a"}) {
		t.Errorf("got %v", got)
	}
}

// TestUnknownTypesCounted sends requests for types the server does not
// serve and checks they are counted per type URL, with the keys bounded.
func TestUnknownTypesCounted(t *testing.T) {
	f := newFixture(t)
	f.eds.Set(cla("a", "10.0.0.1:80"))
	s := xdstest.NewSotW(t, dial(t, f.addr), &corev3.Node{Id: "unknown"})
	const secret = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret"
	// A long URL is cut to 128 bytes at most, here before the "é" the cut
	// would split.
	urls := []string{secret, secret, strings.Repeat("y", 300), strings.Repeat("z", 127) + "é"}
	for i := range 2 * xds.MaxUnknownTypeKeys {
		urls = append(urls, fmt.Sprintf("type.googleapis.com/unknown.T%d", i))
	}
	for _, u := range urls {
		s.Send(&discovery.DiscoveryRequest{TypeUrl: u, ResourceNames: []string{"a"}})
	}
	// Requests are handled in order: once this one is answered, the
	// unknown ones before it have been counted.
	s.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{"a"}})
	if r := s.Recv(); r.TypeUrl != xds.EndpointType {
		t.Fatalf("response for %s", r.TypeUrl)
	}
	got := f.srv.Stats().UnknownTypes
	if got[secret] != 2 {
		t.Errorf("UnknownTypes[Secret] = %d, want 2", got[secret])
	}
	var total uint64
	for k, v := range got {
		total += v
		if len(k) > 128 || !utf8.ValidString(k) {
			t.Errorf("key %q: %d bytes, valid UTF-8 %v", k, len(k), utf8.ValidString(k))
		}
	}
	if total != uint64(len(urls)) {
		t.Errorf("counted %d requests, want %d: %v", total, len(urls), got)
	}
	// The kept keys took MaxUnknownTypeKeys+1 requests (the Secret's two);
	// the rest count under OtherType.
	wantOther := uint64(len(urls) - (xds.MaxUnknownTypeKeys + 1))
	if len(got) != xds.MaxUnknownTypeKeys+1 || got[xds.OtherType] != wantOther {
		t.Errorf("%d keys, %d under %q; want %d keys, %d there: %v", len(got), got[xds.OtherType], xds.OtherType, xds.MaxUnknownTypeKeys+1, wantOther, got)
	}
	// No state for them.
	if p := proxyByNode(t, f.srv, "unknown"); len(p.Types) != 1 {
		t.Errorf("proxy has state for %d types, want 1", len(p.Types))
	}
}
