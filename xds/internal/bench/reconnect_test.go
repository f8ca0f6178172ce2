package main

import (
	"strings"
	"testing"

	"github.com/meshd/meshd/xds"
)

var allTypes = []string{xds.ListenerType, xds.RouteType, xds.ClusterType, xds.EndpointType}

// stream returns a connected stream's status with every type set by f.
func stream(id string, f func(*xds.TypeStatus)) xds.ProxyStatus {
	px := xds.ProxyStatus{NodeID: id, Connected: true, Types: map[string]xds.TypeStatus{}}
	for _, t := range allTypes {
		ts := xds.TypeStatus{TypeURL: t}
		f(&ts)
		px.Types[t] = ts
	}
	return px
}

func resumed(ts *xds.TypeStatus) { ts.Resumed = true }

func acked(ts *xds.TypeStatus) { ts.SentNonce, ts.AckedNonce = "3", "3" }

func TestStreamsSettled(t *testing.T) {
	unacked := stream("c", func(ts *xds.TypeStatus) { ts.SentNonce, ts.AckedNonce = "4", "3" })
	pending := stream("c", func(ts *xds.TypeStatus) { ts.Resumed, ts.Pending = true, 1 })
	// Resumed, then sent a response not yet acknowledged.
	pushedAfterResume := stream("c", func(ts *xds.TypeStatus) { ts.Resumed, ts.SentNonce = true, "1" })
	neither := stream("c", func(*xds.TypeStatus) {})
	missing := stream("c", resumed)
	delete(missing.Types, xds.EndpointType)
	gone := stream("old", func(*xds.TypeStatus) {})
	gone.Connected = false

	for _, tc := range []struct {
		name              string
		proxies           []xds.ProxyStatus
		p                 int
		why               string // substring of the reason; "" for settled
		resumed, answered int
	}{
		{"all resumed", []xds.ProxyStatus{stream("a", resumed), stream("b", resumed), gone}, 2, "", 8, 0},
		{"all acknowledged", []xds.ProxyStatus{stream("a", acked), stream("b", acked)}, 2, "", 0, 8},
		{"too few streams", []xds.ProxyStatus{stream("a", resumed), gone}, 2, "1 of 2 streams", 4, 0},
		{"unacknowledged", []xds.ProxyStatus{stream("a", resumed), unacked}, 2, "neither", 0, 0},
		{"pending", []xds.ProxyStatus{pending}, 1, "pending", 0, 0},
		{"pushed after resume", []xds.ProxyStatus{pushedAfterResume}, 1, "neither", 0, 0},
		{"no response, not resumed", []xds.ProxyStatus{neither}, 1, "neither", 0, 0},
		{"type not asked for", []xds.ProxyStatus{missing}, 1, "has not asked", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := streamsSettled(tc.proxies, tc.p)
			if tc.why == "" {
				if why != "" {
					t.Fatalf("not settled: %s", why)
				}
				if got.resumed != tc.resumed || got.answered != tc.answered {
					t.Fatalf("resumed %d answered %d, want %d and %d", got.resumed, got.answered, tc.resumed, tc.answered)
				}
				return
			}
			if !strings.Contains(why, tc.why) {
				t.Fatalf("reason %q, want one containing %q", why, tc.why)
			}
		})
	}
}

func TestCountsSettled(t *testing.T) {
	stats := func(open int, resumed, acks, pushes, nacks uint64) xds.Stats {
		s := xds.Stats{ConnectedProxies: open, Resumed: map[string]uint64{}, Acks: map[string]uint64{},
			Pushes: map[string]uint64{}, Nacks: map[string]uint64{}}
		for _, typ := range benchTypes {
			s.Resumed[typ], s.Acks[typ], s.Pushes[typ], s.Nacks[typ] = resumed, acks, pushes, nacks
		}
		return s
	}
	// The counters of an earlier round: only what follows counts.
	before := stats(0, 5, 7, 7, 0)
	for _, tc := range []struct {
		name string
		now  xds.Stats
		want string // substring of what is missing; "" for settled
		err  bool
	}{
		{"resumed", stats(3, 8, 7, 7, 0), "", false},
		{"answered", stats(3, 5, 10, 10, 0), "", false},
		{"mixed", stats(3, 6, 9, 9, 0), "", false},
		{"a stream short", stats(3, 6, 8, 8, 0), "1 resumed", false},
		{"a response unacknowledged", stats(3, 5, 10, 11, 0), "3 of 4 responses", false},
		{"streams not open", stats(2, 8, 7, 7, 0), "2 of 3 streams", false},
		{"NACK", stats(3, 8, 7, 7, 1), "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			missing, err := countsSettled(tc.now, before, 3)
			if (err != nil) != tc.err {
				t.Fatalf("error %v, want one: %v", err, tc.err)
			}
			if tc.want == "" && missing != "" || !strings.Contains(missing, tc.want) {
				t.Fatalf("missing %q, want %q", missing, tc.want)
			}
		})
	}
}
