package xds

import (
	"slices"
	"sort"
	"time"
)

// typeState is one stream's subscription to one type: what the client
// asked for, what it holds, and how it answered. The SotW and Delta
// protocols share it. It belongs to the stream's session: owned by the
// stream's loop and guarded by the conn's mu for the registry's readers.
type typeState struct {
	typeURL string
	// wildcard is set when the client subscribed to every resource.
	wildcard bool
	// names are the explicitly subscribed names.
	names nameSet
	// sent holds, per name, the resource the client holds or was last
	// sent. A NACK puts back the values from before the rejected response,
	// so after it sent holds what the client accepted. Change it only
	// with hold and drop, which keep digest.
	sent heldSet
	// digest is the digest of sent: the version of what the client holds,
	// sent as the version of every response (see digest).
	digest digest
	// building holds, for the names changed by the response being built,
	// the values of sent before it; pending pairs each response sent and
	// not yet answered with those values (nil: the client did not hold the
	// name), oldest first: what a NACK of that response puts back.
	building map[string]*resource
	// fresh is, instead of building, the resources of a response built
	// while the client held nothing of the type (its first, mostly):
	// each was new to it. A connecting wildcard client is sent every
	// resource, and a map of them all per stream and type was most of
	// what answering it cost. The slice may be shared: read only.
	fresh []*resource
	// first is the shared first response fresh was taken from, until the
	// response is built (takeFirst).
	first   *wildcardFirst
	pending []pendingResponse
	// rejected holds, per name, the version of a NACKed resource; it is
	// not sent again until it changes.
	rejected map[string]string
	// respond is set when a response is owed even if nothing changed: the
	// first request of a SotW Listener or Cluster subscription and every
	// change of one, so that the client learns what is absent.
	respond bool
	// interest logs the changes of what the server's index routes to
	// this stream for the type, until the stream's I/O code takes them
	// (see interest.go).
	interest []interestOp
	// lastNames is the names list of the last SotW request applied, which
	// the subscription reflects (see sameList).
	lastNames []string
	// answered is set once a response of this type was sent.
	answered bool
	// resuming is set from a Delta request naming the versions the client
	// holds until the first flush of the type; resumed once a first
	// request needed no response, the client holding the current state
	// already (see conn.resumeLocked).
	resuming, resumed bool

	nonce, version string // of the last response
	lastPush       time.Time
	pushes         uint64

	ackedVersion, ackedNonce string
	ackedAt                  time.Time
	acks, nacks              uint64
	lastNack                 *Nack
}

// Nack is a recorded NACK.
type Nack struct {
	// Version and Nonce identify the rejected response. In SotW, Version
	// is the version_info the client sent: its last accepted version. In
	// Delta, whose requests carry no version, it is the system version of
	// the rejected response.
	Version string `json:"version"`
	Nonce   string `json:"nonce"`
	// Code and Message are the client's error_detail.
	Code    int32     `json:"code"`
	Message string    `json:"message"`
	Time    time.Time `json:"time"`
	// Rejected are the names whose new versions the response carried.
	Rejected []string `json:"rejected,omitempty"`
}

func newTypeState(typeURL string) *typeState {
	return &typeState{
		typeURL:  typeURL,
		rejected: map[string]string{},
	}
}

// hold records that the client holds r (or is being sent it).
func (ts *typeState) hold(r *resource) {
	old, ok := ts.sent.put(r)
	if ok {
		ts.digest.sub(old.pair)
	}
	ts.digest.add(r.pair)
	if !ok && !ts.wildcard && !ts.named(r.name) {
		// Holding a name it subscribes to by name changes no interest.
		ts.noteInterest(r.name, false)
	}
}

// drop records that the client no longer holds name.
func (ts *typeState) drop(name string) {
	if old, ok := ts.sent.remove(name); ok {
		ts.digest.sub(old.pair)
		ts.noteInterest(name, true)
	}
}

// named reports whether ts subscribes to name by name.
func (ts *typeState) named(name string) bool {
	return ts.names.has(name)
}

// subscribe changes the subscription and returns the names whose state
// must be recomputed: the names added, and the names of the whole type
// (all) when the client became a wildcard subscriber. Names dropped leave
// sent: the client forgets them on its own.
func (ts *typeState) subscribe(add, remove []string, wildcard bool) (names []string, all bool) {
	// Sorted, so that the names are appended to names in order; a list
	// sorted already (the request codec's, shared) is kept as it is.
	if !slices.IsSorted(add) {
		add = slices.Sorted(slices.Values(add))
	}
	for _, n := range remove {
		r, held := ts.sent.get(n)
		named := ts.named(n)
		ts.names.remove(n)
		if !ts.wildcard || (r != nil && r.namedOnly) {
			ts.drop(n) // which logs a held name's interest
			delete(ts.rejected, n)
		}
		if named && !held {
			ts.noteInterest(n, true)
		}
	}
	if wildcard && !ts.wildcard {
		all = true
	}
	if !wildcard && ts.wildcard {
		// Names the client kept only through the wildcard are dropped.
		for _, n := range ts.sent.names() {
			if _, adding := slices.BinarySearch(add, n); !adding && !ts.names.has(n) {
				ts.drop(n)
				delete(ts.rejected, n)
			}
		}
	}
	ts.setWildcard(wildcard)
	if ts.names.len() == 0 && ascending(add) {
		return ts.subscribeAll(add), all
	}
	for _, n := range add {
		if !ts.names.has(n) {
			was := ts.interested(n)
			ts.names.put(n)
			names = append(names, n)
			ts.noteInterest(n, was)
		}
	}
	return names, all
}

// subscribeAll makes the empty subscription of ts the names add, sorted
// and each once, sharing the slice (read only: the request codec hands
// the same list to every stream that asks for it), and returns them.
func (ts *typeState) subscribeAll(add []string) []string {
	ts.names.fill(add)
	if !ts.wildcard {
		for _, n := range add {
			if !ts.sent.has(n) { // held, it was of interest already
				ts.interest = append(ts.interest, interestOp{name: n, on: true})
			}
		}
	}
	return add
}

// ascending reports whether names are in strictly increasing order: sorted,
// each once.
func ascending(names []string) bool {
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			return false
		}
	}
	return true
}

// count is what ts adds toward WithMaxSubscribedNames: its explicit
// names, and one for a wildcard subscription.
func (ts *typeState) count() int {
	n := ts.names.len()
	if ts.wildcard {
		n++
	}
	return n
}

// countAfter returns what count would return after subscribe(add, remove,
// wildcard), without changing ts: the names kept, (names - remove) + add,
// each counted once.
func (ts *typeState) countAfter(add, remove []string, wildcard bool) int {
	n := ts.names.len()
	adding := make(map[string]struct{}, len(add))
	for _, a := range add {
		adding[a] = struct{}{}
	}
	for a := range adding {
		if !ts.names.has(a) {
			n++
		}
	}
	var dropped map[string]struct{}
	for _, r := range remove {
		if !ts.names.has(r) {
			continue
		}
		if _, readded := adding[r]; readded {
			continue
		}
		if dropped == nil {
			dropped = map[string]struct{}{}
		}
		if _, ok := dropped[r]; !ok {
			dropped[r] = struct{}{}
			n--
		}
	}
	if wildcard {
		n++
	}
	return n
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// diff brings sent up to date for names against the current resources cur
// and returns what changed: resources to send and names removed. It
// remembers the values the client accepted last in prev, for a NACK.
// A resource for which hidden (when not nil) is true is treated as absent;
// a name in resend is sent even when the client holds its version, and
// named removed when it does not exist or the client does not want it.
func (ts *typeState) diff(names, resend map[string]struct{}, cur map[string]*resource, hidden func(*resource) bool) (changed []*resource, removed []string) {
	// A client holding nothing was sent nothing not yet answered: every
	// resource changed is new to it (fresh).
	first := ts.sent.len() == 0 && ts.building == nil && ts.fresh == nil
	if first {
		changed = ts.sizeFirst(len(names))
		defer ts.keepFresh(&changed)
	}
	// In name order, so that what is added to sent is mostly appended.
	var small [8]string
	for _, name := range sortedInto(small[:0], names) {
		r := cur[name]
		if r != nil && hidden != nil && hidden(r) {
			r = nil
		}
		held, has := ts.sent.get(name)
		if !ts.wants(name, r) {
			if has {
				ts.drop(name)
			}
			delete(ts.rejected, name)
			if _, again := resend[name]; again {
				// Dropped beside a wildcard that leaves it out (served
				// by name only): the client keeps it until told.
				removed = append(removed, name)
			}
			continue
		}
		if r == nil {
			delete(ts.rejected, name)
			if has {
				ts.drop(name)
				delete(ts.building, name)
			}
			if _, again := resend[name]; has || again {
				removed = append(removed, name)
			}
			continue
		}
		if v, ok := ts.rejected[name]; ok {
			if v == r.version {
				continue
			}
			delete(ts.rejected, name)
		}
		if _, again := resend[name]; has && held.version == r.version && !again {
			if held.any == nil {
				// The client named this version on reconnecting
				// (clientResource): it holds the current bytes, which
				// the registry's config dump can now show.
				ts.hold(r)
			}
			continue
		}
		ts.update(name, held, r, first)
		changed = append(changed, r)
	}
	return changed, removed
}

// sortedInto appends the names to buf and sorts them. A push under churn
// changes a name or two: the caller passes an array of its own, so they
// are sorted without a slice allocated per push.
func sortedInto(buf []string, names map[string]struct{}) []string {
	for name := range names {
		buf = append(buf, name)
	}
	slices.Sort(buf)
	return buf
}

// update holds r for name in the response being built, remembering in
// building what the client held before it (held, nil for nothing) until
// the client accepts or rejects that response — unless the response is
// built while the client holds nothing (first), whose resources are all
// new to it (keepFresh).
func (ts *typeState) update(name string, held, r *resource, first bool) {
	if first {
		ts.hold(r)
		return
	}
	if ts.building == nil {
		ts.building = map[string]*resource{}
	}
	if _, ok := ts.building[name]; !ok {
		ts.building[name] = held
	}
	ts.hold(r)
}

// sizeFirst sizes sent for a first response of n names, once, rather
// than growing it name by name, and returns the changed slice, sized
// likewise (nil for a few names).
func (ts *typeState) sizeFirst(n int) []*resource {
	if n <= 8 {
		return nil
	}
	ts.sent.grow(n)
	return make([]*resource, 0, n)
}

// keepFresh records the resources changed by a response built while the
// client held nothing as fresh: each new to it.
func (ts *typeState) keepFresh(changed *[]*resource) {
	if len(*changed) > 0 {
		ts.fresh = *changed
	}
}

// held returns the resources the client holds, ordered by name: the full
// state a SotW Listener or Cluster response carries.
func (ts *typeState) held() []*resource {
	out := make([]*resource, 0, ts.sent.len())
	for _, r := range ts.sent.all() {
		if r.any != nil {
			out = append(out, r)
		}
	}
	return out
}

// pendingResponse is a response sent and not yet answered, with the
// values its changed names had before it.
type pendingResponse struct {
	nonce string
	prev  map[string]*resource
	// fresh are resources the response carried that the client did not
	// hold before it (typeState.fresh): values nil in prev, kept as the
	// response's slice until a NACK or a fold needs them in prev.
	fresh []*resource
	// at is when the response went out; a folded response keeps the
	// older time, so a client that never answers keeps aging.
	at time.Time
}

// maxPending bounds the unanswered responses remembered per type; a client
// that never answers folds the oldest into the next, so a NACK of that one
// conservatively puts back older values (causing a resend, never a loss).
const maxPending = 16

// sentResponse records that the response being built went out with nonce
// at time at.
func (ts *typeState) sentResponse(nonce string, at time.Time) {
	ts.pending = append(ts.pending, pendingResponse{nonce: nonce, prev: ts.building, fresh: ts.fresh, at: at})
	ts.building, ts.fresh = nil, nil
	if len(ts.pending) > maxPending {
		oldest, next := &ts.pending[0], &ts.pending[1]
		oldest.spell()
		next.spell()
		if next.prev == nil {
			next.prev = map[string]*resource{}
		}
		for name, p := range oldest.prev {
			next.prev[name] = p // the older value is what came before both
		}
		next.at = oldest.at
		ts.dropPending(1)
	}
}

// spell moves p's fresh resources into prev, as names the client did
// not hold (nil), for the rare paths that change prev: a NACK, a fold.
func (p *pendingResponse) spell() {
	if len(p.fresh) == 0 {
		p.fresh = nil
		return
	}
	if p.prev == nil {
		p.prev = make(map[string]*resource, len(p.fresh))
	}
	for _, r := range p.fresh {
		if _, ok := p.prev[r.name]; !ok {
			p.prev[r.name] = nil
		}
	}
	p.fresh = nil
}

// dropPending forgets the n oldest unanswered responses. Their slots are
// cleared, not just sliced off: the backing array would otherwise keep
// their prev maps — the whole subscription's, after a first response —
// alive until the next append reallocates it.
func (ts *typeState) dropPending(n int) {
	clear(ts.pending[:n])
	ts.pending = ts.pending[n:]
}

// answer records the client's answer to the response with nonce: an ACK,
// or a NACK when nack is set. Each response is answered once: a repeated
// answer, or one naming no response sent, is ignored. An ACK also settles
// every older response (the client processes them in order). A NACK puts
// back, for the names the rejected response changed, what the client held
// before it — unless a later response changed the name again, in which case
// that later response now carries the rejected one's earlier value — and
// marks the rejected versions so they are not sent again until they change.
// answer reports whether the answer was counted.
func (ts *typeState) answer(version, nonce string, nack *Nack, now time.Time) bool {
	if nonce == "" {
		return false
	}
	i := -1
	for j, p := range ts.pending {
		if p.nonce == nonce {
			i = j
			break
		}
	}
	if i < 0 {
		return false
	}
	if nack == nil {
		ts.ackedVersion, ts.ackedNonce, ts.ackedAt = version, nonce, now
		ts.acks++
		ts.dropPending(i + 1)
		return true
	}
	ts.nacks++
	later := ts.pending[i+1:]
	ts.pending[i].spell()
	for j := range later {
		later[j].spell()
	}
next:
	for name, p := range ts.pending[i].prev {
		for _, l := range later {
			if _, ok := l.prev[name]; ok {
				l.prev[name] = p
				continue next
			}
		}
		if r, _ := ts.sent.get(name); r != nil && (p == nil || p.version != r.version) {
			ts.rejected[name] = r.version
			nack.Rejected = append(nack.Rejected, name)
		}
		if p == nil {
			ts.drop(name)
		} else {
			ts.hold(p)
		}
	}
	sort.Strings(nack.Rejected)
	ts.dropPending(i + 1)
	ts.lastNack = nack
	return true
}
