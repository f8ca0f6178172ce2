package security

import (
	"crypto/x509"
	"fmt"
	"time"
)

// Root is a root key pair and its place in the rotation schedule.
type Root struct {
	KeyPair
	// TrustFrom is when the root enters the trust bundle.
	TrustFrom time.Time
	// SignFrom is when the root starts signing leaves; of the roots whose
	// SignFrom has passed, the latest signs.
	SignFrom time.Time
	// RetireAt is when the root leaves the bundle; zero: not scheduled.
	RetireAt time.Time
}

// trusted reports whether r is in the bundle at t.
func (r Root) trusted(t time.Time) bool {
	return !t.Before(r.TrustFrom) && (r.RetireAt.IsZero() || t.Before(r.RetireAt))
}

// Roots is the CA's rotation schedule, oldest root first. Its methods are
// pure: they read the schedule at an instant or return a new one.
type Roots []Root

// Phase names where a schedule stands at an instant.
type Phase string

// The phases of a rotation, in order; a schedule with one root is Stable.
const (
	// PhaseStable: one root, trusted and signing.
	PhaseStable Phase = "stable"
	// PhaseTrustNew: the new root is trusted alongside the old, which
	// still signs.
	PhaseTrustNew Phase = "trust-new"
	// PhaseSignNew: the new root signs; the old stays trusted until the
	// last leaf it signed has expired.
	PhaseSignNew Phase = "sign-new"
)

// View is a schedule read at an instant.
type View struct {
	Phase Phase
	// Signer signs leaves; the zero Root when none does.
	Signer Root
	// Bundle holds the anchors of every trusted root, oldest first.
	Bundle []*x509.Certificate
}

// At reads the schedule at t.
func (rs Roots) At(t time.Time) View {
	v := View{Phase: PhaseStable}
	signer, newest := -1, -1
	for i, r := range rs {
		if !r.trusted(t) {
			continue
		}
		newest = i
		v.Bundle = append(v.Bundle, r.Anchor())
		if !t.Before(r.SignFrom) && (signer < 0 || r.SignFrom.After(rs[signer].SignFrom)) {
			signer = i
		}
	}
	if signer >= 0 {
		v.Signer = rs[signer]
	}
	if len(v.Bundle) > 1 {
		v.Phase = PhaseSignNew
		if signer != newest {
			v.Phase = PhaseTrustNew
		}
	}
	return v
}

// RotationPolicy times a rotation.
type RotationPolicy struct {
	// Propagation is how long a new root is trusted before it signs: long
	// enough for every workload to renew once and so fetch the new bundle
	// (agents renew at half a leaf's life: at least half the leaf TTL).
	Propagation time.Duration
	// LeafTTL is the longest a leaf lives: the old root stays trusted
	// this long after the new one starts signing.
	LeafTTL time.Duration
	// Before starts a rotation when the signing root has less than this
	// left (Due).
	Before time.Duration
}

// Rotate returns the schedule with next added as of now: trusted at
// once, signing after p.Propagation, and the current signer retired
// p.LeafTTL after that. It returns ErrRotating while an earlier rotation
// has not finished (more than one root trusted at now, or one scheduled).
func (rs Roots) Rotate(next KeyPair, now time.Time, p RotationPolicy) (Roots, error) {
	v := rs.At(now)
	if len(v.Bundle) > 1 {
		return nil, ErrRotating
	}
	for _, r := range rs {
		if r.SignFrom.After(now) {
			return nil, ErrRotating
		}
	}
	if v.Signer.Cert == nil {
		return nil, ErrNoSigner
	}
	if next.Cert.NotAfter.Before(now.Add(p.Propagation + p.LeafTTL)) {
		return nil, fmt.Errorf("rotation: the new root expires %s, before the rotation ends", next.Cert.NotAfter.Format(time.RFC3339))
	}
	switchAt := now.Add(p.Propagation)
	out := make(Roots, 0, len(rs)+1)
	for _, r := range rs {
		if r.Cert == v.Signer.Cert {
			r.RetireAt = switchAt.Add(p.LeafTTL)
		}
		out = append(out, r)
	}
	return append(out, Root{KeyPair: next, TrustFrom: now, SignFrom: switchAt}), nil
}

// Due reports whether a rotation should start at now: the signing root
// expires within p.Before and no rotation is under way.
func (rs Roots) Due(now time.Time, p RotationPolicy) bool {
	v := rs.At(now)
	if v.Phase != PhaseStable || v.Signer.Cert == nil {
		return false
	}
	return !now.Add(p.Before).Before(v.Signer.Cert.NotAfter)
}

// Prune returns the schedule without the roots retired by now.
func (rs Roots) Prune(now time.Time) Roots {
	var out Roots
	for _, r := range rs {
		if r.RetireAt.IsZero() || now.Before(r.RetireAt) {
			out = append(out, r)
		}
	}
	return out
}
