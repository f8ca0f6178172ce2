package xds

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"unicode/utf8"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// requestCodec is the server's gRPC codec. It decodes the resource names
// of discovery requests itself: a SotW client repeats its whole
// subscription in every ACK — an Envoy wanting every cluster sends
// thousands of names per change — and a Delta client's subscription is
// held for the stream's life. A name the server serves is answered with
// the cache's own string instead of a fresh one, so an ACK allocates no
// strings, and a thousand streams subscribed to the same names share one
// copy of each. Everything else is the proto codec.
type requestCodec struct {
	proto encoding.CodecV2
	cache *cache
	lists listCache
}

func newRequestCodec(c *cache) *requestCodec {
	return &requestCodec{proto: encoding.GetCodecV2("proto"), cache: c,
		lists: listCache{seed: maphash.MakeSeed(), entries: map[listKey]*listEntry{}}}
}

// listCache remembers the last SotW name lists decoded, so that one list
// sent by many streams — every Envoy wanting every cluster ACKs the same
// thousands of EDS names after each change — is decoded once and then
// recognised by a hash and one comparison of its bytes. The lists handed
// out are shared and read-only. It holds at most maxCachedLists lists of
// at most maxCachedListBytes each.
type listCache struct {
	seed    maphash.Seed
	mu      sync.Mutex // guards entries
	entries map[listKey]*listEntry
}

type listKey struct {
	typeURL string
	hash    uint64
}

type listEntry struct {
	raw   []byte
	names []string
}

const (
	// minCachedList is the shortest list worth caching: below it decoding
	// costs about what recognising does.
	minCachedList      = 64
	maxCachedLists     = 16
	maxCachedListBytes = 1 << 20
)

func (lc *listCache) get(typeURL string, raw []byte) ([]string, listKey) {
	k := listKey{typeURL, maphash.Bytes(lc.seed, raw)}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if e := lc.entries[k]; e != nil && bytes.Equal(e.raw, raw) {
		return e.names, k
	}
	return nil, k
}

func (lc *listCache) put(k listKey, raw []byte, names []string) {
	if len(raw) > maxCachedListBytes {
		return
	}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if len(lc.entries) >= maxCachedLists {
		for old := range lc.entries { // evict one, arbitrarily
			delete(lc.entries, old)
			break
		}
	}
	lc.entries[k] = &listEntry{raw: bytes.Clone(raw), names: names}
}

func (c *requestCodec) Name() string { return "proto" }

func (c *requestCodec) Marshal(v any) (mem.BufferSlice, error) { return c.proto.Marshal(v) }

func (c *requestCodec) Unmarshal(data mem.BufferSlice, v any) error {
	var (
		msg   proto.Message
		shape requestShape
		set   func([2][]string)
	)
	switch req := v.(type) {
	case *discovery.DiscoveryRequest:
		msg, shape, set = req, sotwShape, func(names [2][]string) { req.ResourceNames = names[0] }
	case *discovery.DeltaDiscoveryRequest:
		msg, shape, set = req, deltaShape, func(names [2][]string) {
			req.ResourceNamesSubscribe, req.ResourceNamesUnsubscribe = names[0], names[1]
		}
	default:
		return c.proto.Unmarshal(data, v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	return c.unmarshal(buf.ReadOnlyData(), msg, shape, set)
}

// requestShape gives the field numbers of a request's type URL and of
// its (up to two) repeated resource-name fields; 0 is no field.
type requestShape struct {
	typeURL protowire.Number
	names   [2]protowire.Number
}

var (
	sotwShape  = requestShape{typeURL: 4, names: [2]protowire.Number{3}}    // DiscoveryRequest
	deltaShape = requestShape{typeURL: 2, names: [2]protowire.Number{3, 4}} // DeltaDiscoveryRequest
)

var errBadName = errors.New("xds: resource name is not valid UTF-8")

// unmarshal decodes b into msg: the resource names here, handed to set,
// and the other fields by proto.Unmarshal of the bytes without them.
func (c *requestCodec) unmarshal(b []byte, msg proto.Message, shape requestShape, set func([2][]string)) error {
	typeURL, count, region, ok := scanRequest(b, shape)
	if !ok || count == [2]int{} {
		return proto.Unmarshal(b, msg) // the proto package reports what is wrong
	}
	var key listKey
	cacheable := shape == sotwShape && region.contiguous && count[0] >= minCachedList
	if cacheable {
		var names []string
		if names, key = c.lists.get(typeURL, b[region.lo:region.hi]); names != nil {
			rest := make([]byte, 0, len(b)-(region.hi-region.lo))
			rest = append(append(rest, b[:region.lo]...), b[region.hi:]...)
			if err := proto.Unmarshal(rest, msg); err != nil {
				return err
			}
			set([2][]string{names})
			return nil
		}
	}
	names, rest, err := c.decodeNames(b, typeURL, shape, count)
	if err != nil {
		return err
	}
	if err := proto.Unmarshal(rest, msg); err != nil {
		return err
	}
	if cacheable {
		c.lists.put(key, b[region.lo:region.hi], names[0])
	}
	set(names)
	return nil
}

// decodeNames returns the resource names of the request b, per name
// field, and b without them.
func (c *requestCodec) decodeNames(b []byte, typeURL string, shape requestShape, count [2]int) ([2][]string, []byte, error) {
	var names [2][]string
	for i, n := range count {
		if n > 0 {
			names[i] = make([]string, 0, n)
		}
	}
	rest := make([]byte, 0, 64)
	c.cache.mu.RLock()
	defer c.cache.mu.RUnlock()
	served := c.cache.types[typeURL]
	for in := b; len(in) > 0; {
		num, typ, n := protowire.ConsumeTag(in)
		m := protowire.ConsumeFieldValue(num, typ, in[n:])
		field := in[:n+m]
		in = in[n+m:]
		i := shape.nameField(num, typ)
		if i < 0 {
			rest = append(rest, field...)
			continue
		}
		v, _ := protowire.ConsumeBytes(field[n:])
		if r := served[string(v)]; r != nil { // no allocation: a map lookup
			names[i] = append(names[i], r.name)
			continue
		}
		if !utf8.Valid(v) {
			return names, nil, fmt.Errorf("%w: %q", errBadName, v)
		}
		names[i] = append(names[i], string(v))
	}
	return names, rest, nil
}

// nameField returns which of the shape's name fields a field is, or -1.
func (s requestShape) nameField(num protowire.Number, typ protowire.Type) int {
	if typ != protowire.BytesType || num == 0 {
		return -1
	}
	for i, f := range s.names {
		if f == num {
			return i
		}
	}
	return -1
}

// nameRegion is where a request's name fields lie: b[lo:hi], with no
// other field among them when contiguous.
type nameRegion struct {
	lo, hi     int
	contiguous bool
}

// scanRequest reads a request's type URL, counts its resource names per
// name field and finds where they lie; ok is false for bytes that are not
// a well-formed message.
func scanRequest(b []byte, shape requestShape) (typeURL string, names [2]int, region nameRegion, ok bool) {
	region.contiguous = true
	gap := false // a field other than a name after the first name
	for pos := 0; pos < len(b); {
		num, typ, n := protowire.ConsumeTag(b[pos:])
		if n < 0 {
			return "", names, region, false
		}
		m := protowire.ConsumeFieldValue(num, typ, b[pos+n:])
		if m < 0 {
			return "", names, region, false
		}
		if i := shape.nameField(num, typ); i >= 0 {
			if names == [2]int{} {
				region.lo = pos
			} else if gap {
				region.contiguous = false
			}
			names[i]++
			region.hi = pos + n + m
		} else {
			if num == shape.typeURL && typ == protowire.BytesType {
				v, _ := protowire.ConsumeBytes(b[pos+n:])
				typeURL = string(v)
			}
			gap = names != [2]int{}
		}
		pos += n + m
	}
	return typeURL, names, region, true
}
