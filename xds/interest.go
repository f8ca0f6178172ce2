package xds

// Interest. The server routes a changed name only to the streams it
// concerns (subscribers): a stream's type is interested in the whole type
// while it subscribes by wildcard, and otherwise in each name it
// subscribes to or holds. The session keeps no copy of that: its type
// states log each change of it as they change their names, what they
// hold and the wildcard flag, and the stream's I/O code hands the log to
// the index after every step (session.takeInterest).

// interested reports whether ts, not a wildcard subscription, is
// interested in name: it subscribes to it or holds it.
func (ts *typeState) interested(name string) bool {
	if ts.names.has(name) {
		return true
	}
	return ts.sent.has(name)
}

// noteInterest logs a change of ts's interest in name, which was was
// before the change just made; a wildcard subscription logs none.
func (ts *typeState) noteInterest(name string, was bool) {
	if ts.wildcard {
		return
	}
	if now := ts.interested(name); now != was {
		ts.interest = append(ts.interest, interestOp{name: name, on: now})
	}
}

// setWildcard changes the wildcard flag, logging the change: a wildcard
// subscription is indexed as such and by no name, so its names leave the
// index when it starts and return when it ends.
func (ts *typeState) setWildcard(on bool) {
	if on == ts.wildcard {
		return
	}
	if on {
		ts.eachInterest(func(n string) { ts.interest = append(ts.interest, interestOp{name: n}) })
	}
	ts.wildcard = on
	ts.interest = append(ts.interest, interestOp{wildcard: true, on: on})
	if !on {
		ts.eachInterest(func(n string) { ts.interest = append(ts.interest, interestOp{name: n, on: true}) })
	}
}

// eachInterest calls f with every name ts subscribes to or holds, once.
func (ts *typeState) eachInterest(f func(string)) {
	for _, n := range ts.names.all() {
		f(n)
	}
	for _, r := range ts.sent.all() {
		if !ts.names.has(r.name) {
			f(r.name)
		}
	}
}

// takeInterest returns the interest changes of every type since the last
// call, for the server's index.
func (s *session) takeInterest() []interest {
	var out []interest
	for t, ts := range s.types {
		if len(ts.interest) > 0 {
			out = append(out, interest{typeURL: t, ops: ts.interest})
			ts.interest = nil
		}
	}
	return out
}

// interestNow returns the session's whole interest as changes turning it
// on, or off: what the index holds of the stream, to add or to remove.
func (s *session) interestNow(on bool) []interest {
	out := make([]interest, 0, len(s.types))
	for t, ts := range s.types {
		in := interest{typeURL: t}
		if ts.wildcard {
			in.ops = append(in.ops, interestOp{wildcard: true, on: on})
		} else {
			ts.eachInterest(func(n string) { in.ops = append(in.ops, interestOp{name: n, on: on}) })
		}
		out = append(out, in)
	}
	return out
}
