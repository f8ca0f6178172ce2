package security

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Run rereads the store every reload interval (WithReload) until ctx
// ends, so that a rotation another replica wrote reaches this one; starts
// a rotation when one is due (Roots.Due); and drops retired roots. A
// failed round is logged and retried at the next. It returns ctx's error.
func (a *Authority) Run(ctx context.Context) error {
	t := time.NewTicker(a.opts.reload)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if a.store == nil {
			continue
		}
		if err := a.Maintain(ctx); err != nil && ctx.Err() == nil {
			a.opts.logger.Warn("CA maintenance failed; retrying at the next round", "error", err)
		}
	}
}

// Maintain is one round of Run: reload, then rotate or prune if due.
func (a *Authority) Maintain(ctx context.Context) error {
	if err := a.reload(ctx); err != nil {
		return err
	}
	now := a.opts.now()
	rs := a.Roots()
	switch {
	case rs.Due(now, a.opts.policy()):
		return a.Rotate(ctx)
	case len(rs.Prune(now)) < len(rs):
		return a.update(ctx, func(rs Roots) (Roots, error) { return rs.Prune(now), nil })
	}
	return nil
}

// Rotate starts a rotation now: a new root, trusted at once, signing
// after the propagation time, the old one retired a leaf TTL later (see
// Roots.Rotate). It returns ErrRotating while one is under way, ErrStatic
// for an operator's CA, and ErrConflict when another replica changed the
// state first (which Run then reloads).
func (a *Authority) Rotate(ctx context.Context) error {
	if a.store == nil {
		return ErrStatic
	}
	now := a.opts.now()
	next, err := GenerateRoot(a.td, now, a.opts.rootTTL)
	if err != nil {
		return err
	}
	if err := a.update(ctx, func(rs Roots) (Roots, error) {
		return rs.Prune(now).Rotate(next, now, a.opts.policy())
	}); err != nil {
		return err
	}
	v := a.View()
	a.opts.logger.Info("CA root rotation started", "phase", v.Phase, "new-root", next.Cert.Subject.CommonName,
		"signs-from", now.Add(a.opts.policy().Propagation))
	return nil
}

// update writes change(current roots) to the store at the current
// revision and adopts it.
func (a *Authority) update(ctx context.Context, change func(Roots) (Roots, error)) error {
	a.mu.RLock()
	rs, rev := a.roots, a.revision
	a.mu.RUnlock()
	next, err := change(rs)
	if err != nil {
		return err
	}
	files, err := EncodeState(next, a.opts.now())
	if err != nil {
		return err
	}
	st, err := a.store.Update(ctx, rev, files)
	if err != nil {
		return fmt.Errorf("CA state: %w", err)
	}
	return a.adopt(st)
}

// reload adopts the stored state when its revision moved.
func (a *Authority) reload(ctx context.Context) error {
	st, err := a.store.Load(ctx)
	if err != nil {
		if errors.Is(err, ErrNoState) {
			return fmt.Errorf("CA state vanished from the store: %w", err)
		}
		return fmt.Errorf("CA state: %w", err)
	}
	a.mu.RLock()
	same := st.Revision == a.revision
	a.mu.RUnlock()
	if same {
		return nil
	}
	if err := a.adopt(st); err != nil {
		return err
	}
	a.opts.logger.Info("CA state reloaded", "phase", a.View().Phase, "revision", st.Revision)
	return nil
}
