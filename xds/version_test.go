package xds

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// recompute is the digest of sent from scratch.
func recompute(sent map[string]*resource) digest {
	var d digest
	for name, r := range sent {
		d.add(pairDigest(name, r.version))
	}
	return d
}

func TestDigestIgnoresOrder(t *testing.T) {
	pairs := make([][2]string, 200)
	for i := range pairs {
		pairs[i] = [2]string{fmt.Sprintf("n-%d", i), fmt.Sprintf("%016x", i*7919)}
	}
	var fwd, back digest
	for _, p := range pairs {
		fwd.add(pairDigest(p[0], p[1]))
	}
	for _, p := range slices.Backward(pairs) {
		back.add(pairDigest(p[0], p[1]))
	}
	// A pair added and taken back leaves no trace.
	back.add(pairDigest("stray", "v"))
	back.sub(pairDigest("stray", "v"))
	if fwd != back || fwd == (digest{}) {
		t.Fatalf("forward %s, backward %s", fwd, back)
	}
	if pairDigest("ab", "c") == pairDigest("a", "bc") {
		t.Fatal("the name's boundary does not count")
	}
	if got, ok := parseDigest(fwd.String()); !ok || got != fwd {
		t.Fatalf("parse(%s) = %s, %v", fwd, got, ok)
	}
	for _, s := range []string{"", "1", "42", fwd.String()[1:], fwd.String()[1:] + "g"} {
		if _, ok := parseDigest(s); ok {
			t.Errorf("parseDigest(%q) accepted", s)
		}
	}
}

// TestDigestFollowsSent drives one type's state through random
// subscriptions, changes, responses, ACKs, NACKs and reconnect versions,
// and checks after each step that the digest kept incrementally is the
// digest of what sent holds.
func TestDigestFollowsSent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const names = 12
	name := func() string { return fmt.Sprintf("c%d", rng.IntN(names)) }
	cur := map[string]*resource{}
	ts := newTypeState(EndpointType)
	nonce := 0
	for step := range 5000 {
		switch op := rng.IntN(8); op {
		case 0: // a resource changes or goes away
			n := name()
			if rng.IntN(4) == 0 {
				delete(cur, n)
				break
			}
			r, err := newResource(EndpointType, n, &endpointv3.ClusterLoadAssignment{ClusterName: n,
				Policy: &endpointv3.ClusterLoadAssignment_Policy{OverprovisioningFactor: wrapperspb.UInt32(uint32(rng.IntN(3)))}})
			if err != nil {
				t.Fatal(err)
			}
			cur[n] = r
		case 1: // the subscription changes
			var add, remove []string
			for range rng.IntN(3) {
				add = append(add, name())
			}
			for range rng.IntN(3) {
				remove = append(remove, name())
			}
			ts.subscribe(add, remove, rng.IntN(4) == 0)
		case 2, 3: // a response goes out
			pending := map[string]struct{}{}
			for range rng.IntN(names) {
				pending[name()] = struct{}{}
			}
			ts.diff(pending, nil, cur, nil)
			nonce++
			ts.sentResponse(fmt.Sprint(nonce), time.Now())
		case 4, 5: // the client answers a response
			if len(ts.pending) == 0 {
				break
			}
			var nack *Nack
			if op == 5 {
				nack = &Nack{Message: "no"}
			}
			ts.answer("", ts.pending[rng.IntN(len(ts.pending))].nonce, nack, time.Now())
		case 6: // a reconnecting client names a version
			ts.hold(clientResource(EndpointType, name(), fmt.Sprint(rng.IntN(2))))
		case 7: // the client forgets a name
			ts.drop(name())
		}
		if want := recompute(heldMap(ts.sent)); ts.digest != want {
			t.Fatalf("step %d: digest %s, sent's %s", step, ts.digest, want)
		}
	}
	if ts.sent.len() == 0 || ts.nacks == 0 || ts.acks == 0 {
		t.Fatalf("the walk never held, ACKed or NACKed anything: %d held, %d ACKs, %d NACKs", ts.sent.len(), ts.acks, ts.nacks)
	}
}
