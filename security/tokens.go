package security

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"strings"
	"time"
)

// Authenticator tells who presents a token: on a cluster a Kubernetes
// service-account token checked by TokenReview (security/kube), in folder
// mode a tokens file (Tokens). Errors wrap ErrMalformedToken,
// ErrUnknownToken, ErrExpiredToken or ErrAuthUnavailable.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (Identity, error)
}

// Tokens is an Authenticator over a fixed table of tokens, as a tokens
// file holds them. It keeps only the tokens' SHA-256, so a lookup's time
// does not depend on how much of a token matches.
type Tokens struct {
	entries map[[32]byte]tokenEntry
	now     func() time.Time
}

type tokenEntry struct {
	id      Identity
	expires time.Time // zero: never
}

// ParseTokens reads a tokens file: one token a line, then the
// namespace/serviceAccount it stands for, then optionally its expiry
// (RFC 3339), separated by spaces; '#' starts a comment. Errors name the
// line.
func ParseTokens(data []byte) (*Tokens, error) {
	t := &Tokens{entries: map[[32]byte]tokenEntry{}, now: time.Now}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		e, err := parseTokenLine(f)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		k := sha256.Sum256([]byte(f[0]))
		if _, dup := t.entries[k]; dup {
			return nil, fmt.Errorf("line %d: the token is listed twice", n)
		}
		t.entries[k] = e
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return t, nil
}

func parseTokenLine(f []string) (tokenEntry, error) {
	if len(f) < 2 || len(f) > 3 {
		return tokenEntry{}, fmt.Errorf("want TOKEN NAMESPACE/SERVICEACCOUNT [EXPIRES], got %d fields", len(f))
	}
	ns, sa, ok := strings.Cut(f[1], "/")
	e := tokenEntry{id: Identity{Namespace: ns, ServiceAccount: sa}}
	if !ok {
		return tokenEntry{}, fmt.Errorf("%q: want NAMESPACE/SERVICEACCOUNT", f[1])
	}
	if err := e.id.Validate(); err != nil {
		return tokenEntry{}, err
	}
	if len(f) == 3 {
		exp, err := time.Parse(time.RFC3339, f[2])
		if err != nil {
			return tokenEntry{}, fmt.Errorf("expiry %q: want RFC 3339, e.g. 2027-01-02T15:04:05Z", f[2])
		}
		e.expires = exp
	}
	return e, nil
}

// LoadTokens reads and parses the tokens file at path.
func LoadTokens(path string) (*Tokens, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := ParseTokens(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Len returns how many tokens t holds.
func (t *Tokens) Len() int { return len(t.entries) }

// Authenticate implements Authenticator.
func (t *Tokens) Authenticate(_ context.Context, token string) (Identity, error) {
	if token == "" || strings.ContainsAny(token, " \t\r\n") {
		return Identity{}, ErrMalformedToken
	}
	e, ok := t.entries[sha256.Sum256([]byte(token))]
	if !ok {
		return Identity{}, ErrUnknownToken
	}
	if !e.expires.IsZero() && !t.now().Before(e.expires) {
		return Identity{}, fmt.Errorf("%w: expired at %s", ErrExpiredToken, e.expires.Format(time.RFC3339))
	}
	return e.id, nil
}
