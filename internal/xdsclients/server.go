package xdsclients

import (
	"encoding/json"
	"testing"
	"time"
)

// PeerHeader is the response header in which a server of Serve names
// the caller its TLS handshake verified: its SPIFFE ID, or "plaintext".
const PeerHeader = "x-peer-identity"

// startTimeout bounds how long a server script may take to say it
// started (or, for grpc-js, serves): its listener comes from the control
// plane, and the machine may be loaded.
const startTimeout = 60 * time.Second

// waitStarted waits for the first line of a server script: {"started"}
// or {"serving"} when it is up, {"error"} when it could not bind.
func waitStarted(t testing.TB, p *process) {
	t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			t.Fatalf("%s server exited\n%s", p.name, p.stderr)
		}
		var out struct {
			Started, Serving bool
			Error            string
		}
		if err := json.Unmarshal([]byte(l), &out); err != nil {
			t.Fatalf("%s server: line %q: %v", p.name, l, err)
		}
		if out.Error != "" || !(out.Started || out.Serving) {
			t.Fatalf("%s server: %q\n%s", p.name, l, p.stderr)
		}
	case <-time.After(startTimeout):
		t.Fatalf("%s server: not up within %v\n%s", p.name, startTimeout, p.stderr)
	}
}
