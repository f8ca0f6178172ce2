package xds

import (
	"slices"
	"strings"
	"sync"

	"github.com/meshd/meshd/krt"
)

// cache holds the current serialized resources of every type. It is
// written only by the join handler, one whole batch (one graph
// transaction) at a time, so a reader sees one committed version of
// every type.
//
// This file is the only place mu is taken: apply, takeRound and endRound
// write, read reads. It is also the only place firstMu is taken
// (view.wildcardFirst).
//
// Lock order. A goroutine holding several of the server's locks takes
// them in this order, and never the other way round:
//
//  1. conn.mu — one stream's protocol state (its session): the stream's
//     loop, the server's change notifications and the registry's readers
//     take it.
//  2. cache.mu — read only, through read, for one request or flush.
//  3. counters.mu, requestCodec's listCache.mu, subscribers.mu (the
//     index a stream's step updates while it reads the cache) and
//     cache.firstMu — leaves: nothing is taken while they are held.
//
// Server.mu (the registry) is never held together with conn.mu or
// cache.mu: the server copies what it needs under it and lets go before
// touching a stream or the cache. apply holds mu alone.
type cache struct {
	mu sync.RWMutex // guards following
	// version is the graph version of the last batch applied.
	version uint64
	// types holds the resources by name per type URL and, per variant
	// key (variantKey), the view of the variant: the base overlaid by
	// the variant's own resources, which own holds.
	types map[string]map[string]*resource
	own   map[string]map[string]*resource
	// variants are the variant names of each type URL.
	variants map[string][]string
	// unpushed holds, per type, the names the batches applied changed
	// that no round has taken yet; inRound those of the round handing
	// its names to the streams now, and round counts the rounds taken.
	// A flush sends them too (session.catchUp).
	unpushed, inRound map[string]map[string]struct{}
	round             uint64
	// gen counts the batches applied: the resource maps hold what they
	// hold until it moves.
	gen uint64

	// firstMu guards firsts: per key of types, the first response of a
	// wildcard subscription at generation gen, built by the first stream
	// to need it and shared by the others (view.wildcardFirst).
	firstMu sync.Mutex
	firsts  map[string]*wildcardFirst
	// held is, per key of types, the last list of resources a stream
	// held after a first response built name by name, shared with the
	// next stream that holds the same (view.shareHeld); also firstMu's.
	held map[string][]*resource
	// names is, per type URL, the last list of names a stream subscribed
	// to in one go, shared with the next stream that subscribes to the
	// same (view.shareNames); also firstMu's.
	names map[string][]string

	// ready is closed once the initial state has been applied.
	ready     chan struct{}
	readyOnce sync.Once
}

// view is one read of the cache: one committed version of every type. It
// is valid only inside the read callback that received it, and read-only.
type view struct {
	// version is the graph version of the last batch applied.
	version uint64
	types   map[string]map[string]*resource
	// unpushed and inRound are the cache's (see cache), round the
	// number of the round inRound belongs to.
	unpushed, inRound map[string]map[string]struct{}
	round             uint64
	// gen is the cache's; c is the cache itself, for wildcardFirst.
	gen uint64
	c   *cache
}

// resources returns the current resources of typeURL, by name; nil for a
// type the cache does not hold.
func (v view) resources(typeURL string) map[string]*resource { return v.types[typeURL] }

// counts returns the number of resources per short type name.
func (v view) counts() map[string]int {
	out := make(map[string]int, len(v.types))
	for t, m := range v.types {
		if !strings.Contains(t, variantSep) {
			out[shortType(t)] = len(m)
		}
	}
	return out
}

// newCache returns an empty cache of typeURLs and of variants, the
// variant names per type URL.
func newCache(typeURLs []string, variants map[string][]string) *cache {
	c := &cache{types: make(map[string]map[string]*resource), own: make(map[string]map[string]*resource),
		variants: variants, unpushed: map[string]map[string]struct{}{}, firsts: map[string]*wildcardFirst{},
		held:  map[string][]*resource{},
		names: map[string][]string{},
		ready: make(chan struct{})}
	for _, t := range typeURLs {
		c.types[t] = make(map[string]*resource)
	}
	for t, names := range variants {
		for _, v := range names {
			c.types[variantKey(t, v)] = make(map[string]*resource)
			c.own[variantKey(t, v)] = make(map[string]*resource)
		}
	}
	return c
}

// read calls f with a view of the cache, under the read lock. f must not
// keep the view, nor take conn.mu (see the lock order).
func (c *cache) read(f func(view)) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	f(view{version: c.version, types: c.types, unpushed: c.unpushed, inRound: c.inRound, round: c.round, gen: c.gen, c: c})
}

// apply applies one batch and returns the names it changed, per type.
func (c *cache) apply(b krt.Batch[entry]) map[string][]string {
	changed := make(map[string][]string)
	c.mu.Lock()
	defer c.mu.Unlock()
	if b.Version > c.version {
		c.version = b.Version
	}
	c.gen++
	for _, ev := range b.Events {
		r := ev.Latest().res
		m := c.types[r.typeURL]
		if m == nil {
			continue
		}
		switch {
		case len(r.variants) > 0:
			for _, v := range r.variants {
				c.applyVariant(r, v, ev.Type == krt.EventDelete)
			}
		case ev.Type == krt.EventDelete:
			delete(m, r.name)
			c.rebase(r.typeURL, r.name)
		default:
			m[r.name] = ev.New.res
			c.rebase(r.typeURL, r.name)
		}
		// A variant's change wakes every stream holding the name: those
		// of other variants find nothing changed for them.
		changed[r.typeURL] = append(changed[r.typeURL], r.name)
		u := c.unpushed[r.typeURL]
		if u == nil {
			u = map[string]struct{}{}
			c.unpushed[r.typeURL] = u
		}
		u[r.name] = struct{}{}
	}
	return changed
}

// takeRound starts a round: it returns the names changed since the last
// one, which stay readable as the views' inRound until endRound. The
// caller must not change them.
func (c *cache) takeRound() map[string]map[string]struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.round++
	c.inRound, c.unpushed = c.unpushed, map[string]map[string]struct{}{}
	return c.inRound
}

// endRound ends the round takeRound started: every stream has its names.
func (c *cache) endRound() {
	c.mu.Lock()
	c.inRound = nil
	c.mu.Unlock()
}

// markReady closes ready once.
func (c *cache) markReady() {
	c.readyOnce.Do(func() { close(c.ready) })
}

// wildcardFirst returns the first response of a wildcard subscription to
// the resources of key (a type URL or a variant's key): every resource
// but those served by name only, ordered by name, and their digest. It
// builds it once per generation, so that a hundred wildcard clients
// connecting at once share one sort of every name; the result is read
// only.
func (v view) wildcardFirst(key string) *wildcardFirst {
	c := v.c
	c.firstMu.Lock()
	defer c.firstMu.Unlock()
	if f := c.firsts[key]; f != nil && f.gen == v.gen {
		return f
	}
	f := newWildcardFirst(v.types[key], v.gen)
	c.firsts[key] = f
	return f
}

// shareHeld returns the list of resources another stream holds of key if
// it is the same as held (ordered by name), or else held, kept for the
// next stream: the streams that ask for the same names by name, as a
// hundred Envoys' RDS and EDS subscriptions do, then share one list. The
// resources of a generation are distinct pointers, so comparing them
// compares versions too. Both held and the result are read only from
// now on.
func (v view) shareHeld(key string, held []*resource) []*resource {
	return shareLast(&v.c.firstMu, v.c.held, key, held)
}

// shareNames returns the list of names another stream subscribes to of
// typeURL if it is the same as names (sorted, each once), or else names,
// kept for the next stream: a hundred Delta clients subscribing to the
// same RDS and EDS names, each list decoded afresh, then keep one. The
// request codec hands out the cache's own strings, so equal names are
// mostly the same pointers and comparing them is cheap. Both names and
// the result are read only from now on.
func (v view) shareNames(typeURL string, names []string) []string {
	return shareLast(&v.c.firstMu, v.c.names, typeURL, names)
}

// shareLast returns lasts[key] if it equals list, or else keeps list there
// for the next caller and returns it, under mu. Lists that share their
// first element are the same list, which spares the element compare.
func shareLast[E comparable](mu *sync.Mutex, lasts map[string][]E, key string, list []E) []E {
	mu.Lock()
	defer mu.Unlock()
	last := lasts[key]
	if len(last) == len(list) && (len(last) == 0 || &last[0] == &list[0] || slices.Equal(last, list)) {
		return last
	}
	lasts[key] = list
	return list
}
