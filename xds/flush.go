package xds

import (
	"maps"
	"strconv"
	"time"
)

// update is one response to send.
type update struct {
	typeURL   string
	version   string
	nonce     string
	resources []*resource
	removed   []string
	// built is when the response was built, for the push duration.
	built time.Time
	// first, when set, is the shared first response of a wildcard
	// subscription that u carries, whose encoding u shares (initial.go).
	first *wildcardFirst
}

// flush builds the responses for everything pending, from one view of
// the cache, in push order, and records them as sent. The caller sends
// them in that order.
func (s *session) flush(v view, now time.Time) []update {
	s.catchUp(v)
	pending := s.pending
	if len(pending) > 0 {
		s.pending, s.spare = s.spare, nil
		if s.pending == nil {
			s.pending = make(map[string]map[string]struct{}, len(pending))
		}
		// Taken whole: names marked pending while this flush builds go
		// to the next one.
		defer func() {
			clear(pending)
			s.spare = pending
		}()
	}
	var hidden func(*resource) bool
	if s.proto.namespaceOf != nil {
		hidden = s.hidden
	}
	var updates []update
	for _, typeURL := range s.typeOrder {
		ts := s.types[typeURL]
		names, resend := pending[typeURL], s.takeResend(typeURL)
		if len(names) == 0 && len(resend) == 0 && !ts.respond {
			continue
		}
		if len(resend) > 0 {
			if names == nil {
				names = map[string]struct{}{}
			}
			maps.Copy(names, resend)
		}
		u, ok := s.build(ts, v, names, resend, hidden, now)
		if !ok {
			continue
		}
		ts.respond = false
		s.nonce++
		u.nonce = strconv.FormatUint(s.nonce, 10)
		// The version is what the client holds once it accepts the
		// response, by content: any replica would send the same.
		u.version = ts.digest.String()
		ts.nonce, ts.version, ts.lastPush, ts.answered = u.nonce, u.version, now, true
		ts.sentResponse(u.nonce, now)
		ts.pushes++
		updates = append(updates, u)
	}
	return updates
}

// catchUp adds to a flush that sends anything the names the stream
// subscribes to that changed after the rounds that made the others
// pending: those of the round under way, unless it told the stream
// already, and those no round has taken yet. A pending name goes out at
// its current version; without them it could go out ahead of a change
// committed before it, which the next round would bring (a route naming
// a new cluster before that cluster, say), and the stream would hold a
// mix that no committed version held. A flush that sends nothing takes
// nothing in, so that pushes stay paced.
func (s *session) catchUp(v view) {
	if len(s.pending) == 0 && len(s.resend) == 0 {
		return
	}
	if v.inRound != nil && s.round != v.round {
		s.changed(v.inRound, v)
	}
	s.changed(v.unpushed, v)
}

// takeResend returns and forgets the names of typeURL to resend (warm).
func (s *session) takeResend(typeURL string) map[string]struct{} {
	r := s.resend[typeURL]
	delete(s.resend, typeURL)
	return r
}

// build brings ts up to date for names against v and returns the
// response that carries the change, if one is owed: in Delta the changed
// and removed resources; in SotW every held resource for the full-state
// types (Listeners, Clusters), and the changed ones for the others.
func (s *session) build(ts *typeState, v view, names, resend map[string]struct{}, hidden func(*resource) bool, now time.Time) (update, bool) {
	changed, removed := s.diff(ts, v, names, resend, s.resources(v, ts.typeURL), hidden)
	s.warm(ts.typeURL, changed, ts.building)
	resuming := ts.resuming
	ts.resuming = false
	u := update{typeURL: ts.typeURL, built: now, first: ts.takeFirst()}
	switch {
	case s.kind == Delta:
		if len(changed) == 0 && len(removed) == 0 {
			if resuming {
				// Every version the client named on reconnecting is
				// current.
				s.resumed(ts, now)
			}
			return u, false
		}
		u.resources, u.removed = changed, removed
	case fullStateType(ts.typeURL):
		if len(changed) == 0 && len(removed) == 0 && !ts.respond {
			return u, false
		}
		u.resources = ts.held()
	default:
		if len(changed) == 0 {
			return u, false
		}
		u.resources = changed
	}
	return u, true
}
