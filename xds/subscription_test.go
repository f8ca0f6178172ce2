package xds

import (
	"testing"
	"time"
)

// TestAnswerPerResponse: with two responses in flight, an ACK of the first
// and a NACK of the second leave the server believing the client holds the
// first's value — not the value from before both.
func TestAnswerPerResponse(t *testing.T) {
	res := func(v string) *resource { return &resource{name: "a", version: v} }
	ts := newTypeState(EndpointType)
	ts.names.put("a")
	names := map[string]struct{}{"a": {}}
	step := func(v, nonce string) {
		if changed, _ := ts.diff(names, nil, map[string]*resource{"a": res(v)}, nil); len(changed) != 1 {
			t.Fatalf("version %s not sent", v)
		}
		ts.nonce = nonce
		ts.sentResponse(nonce, time.Now())
	}
	step("v1", "1")
	if !ts.answer("", "1", nil, time.Now()) {
		t.Fatal("ACK of 1 not counted")
	}
	step("v2", "2")
	step("v3", "3")
	if !ts.answer("", "2", nil, time.Now()) { // the older response, ACKed late
		t.Fatal("ACK of 2 not counted")
	}
	if !ts.answer("", "3", &Nack{Message: "bad"}, time.Now()) {
		t.Fatal("NACK of 3 not counted")
	}
	if got := heldMap(ts.sent)["a"].version; got != "v2" {
		t.Fatalf("server thinks the client holds %s, want v2", got)
	}
	// v1 is a change from what the client holds (v2), so it is sent.
	if changed, _ := ts.diff(names, nil, map[string]*resource{"a": res("v1")}, nil); len(changed) != 1 {
		t.Fatal("going back to v1 was not sent")
	}
	// A repeated answer to an answered response is ignored.
	if ts.answer("", "3", &Nack{Message: "bad"}, time.Now()) || ts.nacks != 1 {
		t.Fatalf("repeated NACK counted: nacks=%d", ts.nacks)
	}
}
