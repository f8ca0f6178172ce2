package security

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/bundle/x509bundle"
	"github.com/spiffe/go-spiffe/v2/svid/x509svid"
)

func TestRootsPhases(t *testing.T) {
	old, next := root(t, t0), root(t, t0)
	p := RotationPolicy{Propagation: 4 * time.Hour, LeafTTL: 8 * time.Hour}
	rs := Roots{{KeyPair: old, TrustFrom: t0, SignFrom: t0}}
	rotated, err := rs.Rotate(next, t0.Add(time.Hour), p)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		at     time.Duration
		phase  Phase
		signer KeyPair
		bundle int
	}{
		{0, PhaseStable, old, 1},
		{time.Hour, PhaseTrustNew, old, 2},
		{5*time.Hour - time.Nanosecond, PhaseTrustNew, old, 2},
		{5 * time.Hour, PhaseSignNew, next, 2},
		{13*time.Hour - time.Nanosecond, PhaseSignNew, next, 2},
		{13 * time.Hour, PhaseStable, next, 1},
	}
	for _, tc := range cases {
		v := rotated.At(t0.Add(tc.at))
		if v.Phase != tc.phase || v.Signer.Cert != tc.signer.Cert || len(v.Bundle) != tc.bundle {
			t.Errorf("at +%s: phase %s, signer new=%v, bundle %d; want %s, new=%v, %d",
				tc.at, v.Phase, v.Signer.Cert == next.Cert, len(v.Bundle), tc.phase, tc.signer.Cert == next.Cert, tc.bundle)
		}
	}
	for _, at := range []time.Duration{time.Hour, 6 * time.Hour} {
		if _, err := rotated.Rotate(root(t, t0), t0.Add(at), p); !errors.Is(err, ErrRotating) {
			t.Errorf("a second rotation at +%s: %v, want ErrRotating", at, err)
		}
	}
	if pruned := rotated.Prune(t0.Add(13 * time.Hour)); len(pruned) != 1 || pruned[0].Cert != next.Cert {
		t.Errorf("pruned after the rotation: %d roots", len(pruned))
	}
	if _, err := rotated.Prune(t0.Add(13*time.Hour)).Rotate(root(t, t0), t0.Add(13*time.Hour), p); err != nil {
		t.Errorf("rotating again once done: %v", err)
	}
}

func TestRootsDue(t *testing.T) {
	kp, err := GenerateRoot(td, t0, 100*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	rs := Roots{{KeyPair: kp, TrustFrom: t0, SignFrom: t0}}
	p := RotationPolicy{Before: 10 * time.Hour, Propagation: time.Hour, LeafTTL: time.Hour}
	if rs.Due(t0.Add(89*time.Hour), p) || !rs.Due(t0.Add(90*time.Hour), p) {
		t.Error("Due does not turn true 10h before the root's end")
	}
	rotated, _ := rs.Rotate(root(t, t0), t0.Add(90*time.Hour), p)
	if rotated.Due(t0.Add(90*time.Hour), p) {
		t.Error("Due while a rotation is under way")
	}
}

// workload is an agent's view: its chain and the bundle it trusts.
type workload struct {
	chain  Issued
	issued time.Time
}

// TestRotationKeepsEveryPeerVerifiable plays workloads that renew at half
// a leaf's life, as meshd agent does, through a rotation, and checks at
// every step that each one's certificate verifies against every other's
// bundle: no handshake between them would fail.
func TestRotationKeepsEveryPeerVerifiable(t *testing.T) {
	now := t0
	ttl := 4 * time.Hour
	a := NewAuthority(&memStore{}, td, WithClock(func() time.Time { return now }), WithLeafTTL(ttl))
	ctx := context.Background()
	if err := a.Init(ctx); err != nil {
		t.Fatal(err)
	}
	first := a.View().Signer.Cert
	ws := make([]workload, 3)
	renew := func(i int) {
		iss, err := a.Sign(Request{CSR: csrPEM(t, ecKey(t)), ID: mustID(t, "ns", string(rune('a'+i)))})
		if err != nil {
			t.Fatalf("renewing %d at +%s: %v", i, now.Sub(t0), err)
		}
		ws[i] = workload{iss, now}
	}
	for i := range ws {
		now = t0.Add(time.Duration(i) * 40 * time.Minute)
		renew(i)
	}
	phases := map[Phase]bool{}
	for step := 0; now.Before(t0.Add(24 * time.Hour)); step++ {
		now = now.Add(10 * time.Minute)
		if step == 6 {
			if err := a.Rotate(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Maintain(ctx); err != nil {
			t.Fatal(err)
		}
		phases[a.View().Phase] = true
		for i, w := range ws {
			if !now.Before(w.issued.Add(ttl / 2)) {
				renew(i)
			}
		}
		checkPeers(t, ws, now)
	}
	if !phases[PhaseTrustNew] || !phases[PhaseSignNew] || !phases[PhaseStable] {
		t.Errorf("phases seen: %v", phases)
	}
	if rs := a.Roots(); len(rs) != 1 || rs[0].Cert == first {
		t.Errorf("after the rotation: %d roots, the first still there: %v", len(rs), rs[0].Cert == first)
	}
}

func checkPeers(t *testing.T, ws []workload, now time.Time) {
	t.Helper()
	for i, server := range ws {
		for j, client := range ws {
			b := x509bundle.FromX509Authorities(td, client.chain.Bundle)
			if _, _, err := x509svid.Verify(server.chain.Chain, b, x509svid.WithTime(now)); err != nil {
				t.Fatalf("+%s: %d's certificate fails %d's bundle: %v", now.Sub(t0), i, j, err)
			}
		}
	}
}

func TestInitRacingReplicasShareOneRoot(t *testing.T) {
	s := &memStore{}
	a, b := NewAuthority(s, td), NewAuthority(s, td)
	ctx := context.Background()
	if err := a.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if !a.View().Signer.Cert.Equal(b.View().Signer.Cert) {
		t.Fatal("two authorities on one store sign with different roots")
	}
}

func TestStateRoundTrip(t *testing.T) {
	rs := Roots{{KeyPair: root(t, t0), TrustFrom: t0, SignFrom: t0, RetireAt: t0.Add(time.Hour)},
		{KeyPair: root(t, t0), TrustFrom: t0, SignFrom: t0.Add(time.Minute)}}
	files, err := EncodeState(rs, t0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeState(files)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got[1].Cert.Equal(rs[1].Cert) || !got[0].RetireAt.Equal(rs[0].RetireAt) || !got[1].SignFrom.Equal(rs[1].SignFrom) {
		t.Fatalf("decoded %+v", got)
	}
	if bundle, _ := ParseCerts(files[BundleFile]); len(bundle) != 2 {
		t.Errorf("bundle file holds %d roots, want 2", len(bundle))
	}
	for _, bad := range []string{"", "{", `{"version":2,"roots":[]}`, `{"version":1,"roots":[]}`, `{"version":1,"roots":[{"cert":"x","key":"y"}]}`} {
		if _, err := DecodeState(map[string][]byte{StateFile: []byte(bad)}); err == nil {
			t.Errorf("DecodeState(%q) accepted", bad)
		}
	}
}
