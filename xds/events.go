package xds

import (
	"fmt"
	"strings"
)

// eventKind names what a session reports besides its responses.
type eventKind int

const (
	// evUnknownType: a request named a type the server does not serve.
	evUnknownType eventKind = iota
	// evIdentityMismatch: the node named another namespace (detail) than
	// the client certificate (the session holds the certificate's).
	evIdentityMismatch
	// evAnswer: the client ACKed (nack nil) or NACKed a response.
	evAnswer
	// evLimit: a request exceeded the limit name; err ends the stream.
	evLimit
	// evDenied: the client asked for name, which exists but is hidden
	// from its namespace; detail is the resource's visibility.
	evDenied
	// evResumed: the client's first request of the type showed that it
	// holds the current resources (n of them) at version.
	evResumed
	// evUnauthenticated: a stream without a verified certificate was
	// refused (WithAnonymous).
	evUnauthenticated
)

// event is one thing a session reports for the stream code to count, log
// and observe: the pure core does neither. The fields used depend on kind.
type event struct {
	kind    eventKind
	typeURL string
	name    string
	detail  string
	version string
	nonce   string
	nack    *Nack
	n       int
	err     error
}

// String renders the event as the protocol scripts (testdata/*.txt) show
// it.
func (e event) String() string {
	t := shortType(e.typeURL)
	switch e.kind {
	case evUnknownType:
		return fmt.Sprintf("unknown-type %q", e.typeURL)
	case evIdentityMismatch:
		return fmt.Sprintf("identity-mismatch node-namespace=%q", e.detail)
	case evAnswer:
		if e.nack == nil {
			return fmt.Sprintf("ack %s nonce=%s", t, e.nonce)
		}
		return fmt.Sprintf("nack %s nonce=%s rejected=[%s] %q", t, e.nonce, strings.Join(e.nack.Rejected, " "), e.nack.Message)
	case evLimit:
		return fmt.Sprintf("limit %s", e.name)
	case evDenied:
		return fmt.Sprintf("denied %s %s visible-to=%s", t, e.name, e.detail)
	case evResumed:
		return fmt.Sprintf("resumed %s version=%s resources=%d", t, shortVersion(e.version), e.n)
	case evUnauthenticated:
		return "unauthenticated"
	}
	return fmt.Sprintf("event(%d)", e.kind)
}

// shortVersion returns the first 8 digits of a digest, enough to tell
// versions apart when reading.
func shortVersion(v string) string {
	if len(v) > 8 {
		return v[:8]
	}
	return v
}
