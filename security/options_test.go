package security

import (
	"context"
	"errors"
	"testing"
	"time"
)

func clockAt(at time.Time) Option { return WithClock(func() time.Time { return at }) }

func initAuthority(t *testing.T, s Store, opts ...Option) *Authority {
	t.Helper()
	a := NewAuthority(s, td, opts...)
	if err := a.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	return a
}

func TestWithMaxCSRBytes(t *testing.T) {
	req := Request{CSR: csrPEM(t, ecKey(t)), ID: mustID(t, "shop", "web")}
	if _, err := initAuthority(t, &memStore{}, clockAt(t0)).Sign(req); err != nil {
		t.Fatalf("default limit: %v", err)
	}
	small := initAuthority(t, &memStore{}, clockAt(t0), WithMaxCSRBytes(len(req.CSR)-1))
	if _, err := small.Sign(req); err == nil {
		t.Fatalf("a %d-byte CSR was signed under a limit of %d", len(req.CSR), len(req.CSR)-1)
	}
}

func TestWithRootTTL(t *testing.T) {
	a := initAuthority(t, &memStore{}, clockAt(t0), WithRootTTL(48*time.Hour))
	if got := a.Expiry().Sub(t0); got < 47*time.Hour || got > 49*time.Hour {
		t.Fatalf("root lives %s, want about 48h", got)
	}
}

// TestWithRotation starts a rotation only when the policy's Before says
// the root is close enough to its end.
func TestWithRotation(t *testing.T) {
	later := t0.Add(5 * 24 * time.Hour) // 5 of the root's 10 days left
	for _, tc := range []struct {
		name   string
		before time.Duration
		roots  int
	}{
		{"default: a tenth of the root's life", 0, 1},
		{"before 6 days", 6 * 24 * time.Hour, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &memStore{}
			initAuthority(t, s, clockAt(t0), WithRootTTL(10*24*time.Hour))
			a := initAuthority(t, s, clockAt(later), WithRootTTL(10*24*time.Hour),
				WithRotation(RotationPolicy{Before: tc.before}))
			if err := a.Maintain(t.Context()); err != nil {
				t.Fatal(err)
			}
			if got := len(a.Roots()); got != tc.roots {
				t.Fatalf("%d roots after Maintain, want %d", got, tc.roots)
			}
		})
	}
}

// TestWithReload has a second replica follow a rotation the first wrote,
// within a few of its reload intervals.
func TestWithReload(t *testing.T) {
	s := &memStore{}
	first := initAuthority(t, s, clockAt(t0))
	second := initAuthority(t, s, clockAt(t0), WithReload(10*time.Millisecond))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- second.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	}()
	if err := first.Rotate(t.Context()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(second.Roots()) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("second replica holds %d roots 5s after the rotation, want 2", len(second.Roots()))
		}
		time.Sleep(5 * time.Millisecond)
	}
}
