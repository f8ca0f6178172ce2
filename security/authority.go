package security

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"
)

// Authority signs workload certificates with the roots of its schedule.
// Create it with NewAuthority or NewStaticAuthority; it is safe for
// concurrent use.
type Authority struct {
	opts  options
	td    spiffeid.TrustDomain
	store Store // nil for an operator's CA

	mu       sync.RWMutex // guards roots and revision
	roots    Roots
	revision string
}

// NewAuthority returns an authority whose roots are kept in store and
// generated for trust domain td. It does nothing until Init.
func NewAuthority(store Store, td spiffeid.TrustDomain, opts ...Option) *Authority {
	a := &Authority{opts: defaultOptions(), td: td, store: store}
	for _, o := range opts {
		o(&a.opts)
	}
	return a
}

// NewStaticAuthority returns an authority signing with an operator's CA
// (see NewKeyPair). It needs no Init, and Run only waits.
func NewStaticAuthority(kp KeyPair, opts ...Option) *Authority {
	a := &Authority{opts: defaultOptions()}
	for _, o := range opts {
		o(&a.opts)
	}
	a.roots = Roots{{KeyPair: kp}}
	return a
}

// Init loads the roots from the store, or, when it holds none, generates
// a root and creates it there. Of replicas racing, the store keeps one
// root and Init returns with that one in every replica.
func (a *Authority) Init(ctx context.Context) error {
	if a.store == nil {
		return nil
	}
	st, err := a.store.Load(ctx)
	created := false
	if errors.Is(err, ErrNoState) {
		st, created, err = a.create(ctx)
	}
	if err != nil {
		return fmt.Errorf("CA state: %w", err)
	}
	if err := a.adopt(st); err != nil {
		return err
	}
	v := a.View()
	a.opts.logger.Info("CA root ready", "created", created, "phase", v.Phase,
		"root", v.Signer.Anchor().Subject.CommonName, "expires", v.Signer.Anchor().NotAfter)
	return nil
}

// create generates a root and offers it to the store, which returns the
// winner's state; created reports whether ours won.
func (a *Authority) create(ctx context.Context) (Stored, bool, error) {
	now := a.opts.now()
	kp, err := GenerateRoot(a.td, now, a.opts.rootTTL)
	if err != nil {
		return Stored{}, false, err
	}
	files, err := EncodeState(Roots{{KeyPair: kp, TrustFrom: now.Add(-clockSkew), SignFrom: now.Add(-clockSkew)}}, now)
	if err != nil {
		return Stored{}, false, err
	}
	st, err := a.store.Create(ctx, files)
	if err != nil {
		return Stored{}, false, err
	}
	return st, string(st.Files[StateFile]) == string(files[StateFile]), nil
}

// adopt decodes a stored state and makes it current.
func (a *Authority) adopt(st Stored) error {
	rs, err := DecodeState(st.Files)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.roots, a.revision = rs, st.Revision
	return nil
}

// View returns the schedule read now; the zero View before Init.
func (a *Authority) View() View {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.roots.At(a.opts.now())
}

// Roots returns the current schedule.
func (a *Authority) Roots() Roots {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.roots
}

// Expiry returns when the signing CA (its certificate or one above it)
// expires; zero before Init.
func (a *Authority) Expiry() time.Time {
	s := a.View().Signer
	if s.Cert == nil {
		return time.Time{}
	}
	end := s.Cert.NotAfter
	for _, c := range s.Chain {
		if c.NotAfter.Before(end) {
			end = c.NotAfter
		}
	}
	return end
}

// Sign checks req's CSR and signs a leaf naming req.ID only. Errors wrap
// ErrCSRTooLarge, ErrMalformedCSR, ErrUnsupportedKey,
// ErrIdentityMismatch or ErrBadValidity for a bad request, and
// ErrNotInitialized or ErrNoSigner when the authority cannot sign.
func (a *Authority) Sign(req Request) (Issued, error) {
	if req.TTL < 0 {
		return Issued{}, fmt.Errorf("%w: %s", ErrBadValidity, req.TTL)
	}
	csr, err := checkCSR(req.CSR, req.ID, a.opts.maxCSRBytes)
	if err != nil {
		return Issued{}, err
	}
	return a.issue(csr.PublicKey, workloadTemplate(req.ID), req.TTL)
}

// issue signs tmpl for pub with the signing root, for ttl capped at the
// leaf TTL (0: the leaf TTL), with the chain and the bundle.
func (a *Authority) issue(pub any, tmpl *x509.Certificate, ttl time.Duration) (Issued, error) {
	if ttl <= 0 || ttl > a.opts.leafTTL {
		ttl = a.opts.leafTTL
	}
	if len(a.Roots()) == 0 {
		return Issued{}, ErrNotInitialized
	}
	v := a.View()
	if v.Signer.Cert == nil {
		return Issued{}, ErrNoSigner
	}
	leaf, err := issueLeaf(v.Signer.KeyPair, pub, tmpl, a.opts.now(), ttl)
	if err != nil {
		return Issued{}, err
	}
	chain := append([]*x509.Certificate{leaf}, v.Signer.intermediates()...)
	return Issued{Leaf: leaf, Chain: chain, Bundle: v.Bundle}, nil
}
