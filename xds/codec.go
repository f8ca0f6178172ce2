package xds

import (
	"bytes"
	"errors"
	"fmt"
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
// copy of each. So are the names and versions of a reconnecting Delta
// client's initial_resource_versions — thousands per type for a wildcard
// client — where the server has them. Everything else is the proto codec.
type requestCodec struct {
	proto encoding.CodecV2
	cache *cache
	lists listCache
}

func newRequestCodec(c *cache) *requestCodec {
	return &requestCodec{proto: encoding.GetCodecV2("proto"), cache: c}
}

// listCache remembers the last SotW name lists decoded, so that one list
// sent by many streams — every Envoy wanting every cluster ACKs the same
// thousands of EDS names after each change — is decoded once and then
// recognised by one comparison of its bytes: no hash of them, no walk of
// their fields (recognise). The lists handed out are shared and
// read-only. It holds at most maxCachedLists lists of at most
// maxCachedListBytes each.
type listCache struct {
	mu sync.Mutex // guards entries
	// entries is replaced, never changed in place, so a reader walks
	// the slice it took under mu without holding it.
	entries []*listEntry
}

type listEntry struct {
	typeURL string
	raw     []byte
	names   []string
}

const (
	// minCachedList is the shortest list worth caching: below it decoding
	// costs about what recognising does.
	minCachedList      = 64
	maxCachedLists     = 16
	maxCachedListBytes = 1 << 20
)

// recognise returns the names of the SotW request b when its name fields
// are one cached list, and b without them; ok is false otherwise. It
// walks only the fields around the names: a list is found by comparing
// its bytes where the names start.
func (lc *listCache) recognise(b []byte) (names []string, rest []byte, ok bool) {
	lo, found := firstNameField(b)
	if !found {
		return nil, nil, false
	}
	lc.mu.Lock()
	entries := lc.entries
	lc.mu.Unlock()
	for _, e := range entries {
		hi := lo + len(e.raw)
		if hi > len(b) || !bytes.Equal(b[lo:hi], e.raw) {
			continue
		}
		// The list must end here: a longer list with this prefix is
		// another list.
		typeURL, after, _, wellFormed := scanRequest(b[hi:], sotwShape)
		if !wellFormed || after.names[0] > 0 {
			continue
		}
		if typeURL == "" {
			typeURL, _, _, _ = scanRequest(b[:lo], sotwShape)
		}
		if typeURL != e.typeURL {
			continue
		}
		rest = make([]byte, 0, len(b)-len(e.raw))
		return e.names, append(append(rest, b[:lo]...), b[hi:]...), true
	}
	return nil, nil, false
}

// firstNameField returns where the first SotW name field of b starts;
// found is false when there is none or b is not well formed before it.
func firstNameField(b []byte) (pos int, found bool) {
	for pos < len(b) {
		num, typ, n := protowire.ConsumeTag(b[pos:])
		if n < 0 {
			return 0, false
		}
		if sotwShape.nameField(num, typ) == 0 {
			return pos, true
		}
		m := protowire.ConsumeFieldValue(num, typ, b[pos+n:])
		if m < 0 {
			return 0, false
		}
		pos += n + m
	}
	return 0, false
}

// put caches the list raw of typeURL, decoded as names, in place of the
// oldest when full.
func (lc *listCache) put(typeURL string, raw []byte, names []string) {
	if len(raw) > maxCachedListBytes {
		return
	}
	e := &listEntry{typeURL: typeURL, raw: bytes.Clone(raw), names: names}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	keep := lc.entries
	if len(keep) >= maxCachedLists {
		keep = keep[:maxCachedLists-1]
	}
	// Newest first: the list most streams ACK now is compared first.
	lc.entries = append([]*listEntry{e}, keep...)
}

func (c *requestCodec) Name() string { return "proto" }

// Marshal encodes the server's responses (outgoing, see encode.go), and
// marshals any other message as gRPC's proto codec does, into a buffer
// of responseBuffers. The returned buffers are freed by gRPC once
// written.
func (c *requestCodec) Marshal(v any) (mem.BufferSlice, error) {
	if o, ok := v.(*outgoing); ok {
		return o.encode()
	}
	msg, ok := v.(proto.Message)
	if !ok {
		return c.proto.Marshal(v)
	}
	size := proto.Size(msg)
	// Size has just cached the size of every message: marshaling reuses it.
	opts := proto.MarshalOptions{UseCachedSize: true}
	if mem.IsBelowBufferPoolingThreshold(size) {
		b, err := opts.Marshal(msg)
		if err != nil {
			return nil, fmt.Errorf("xds: marshal %T: %w", v, err)
		}
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	buf := responseBuffers.Get(size)
	out, err := opts.MarshalAppend((*buf)[:0], msg)
	if err != nil {
		responseBuffers.Put(buf)
		return nil, fmt.Errorf("xds: marshal %T: %w", v, err)
	}
	if len(out) != size {
		// Not what Size said: the message changed meanwhile (responses
		// share immutable resources, so it should not). Send what was
		// marshaled; buf may hold part of it, so it is not pooled again.
		return mem.BufferSlice{mem.SliceBuffer(out)}, nil
	}
	return mem.BufferSlice{mem.NewBuffer(buf, responseBuffers)}, nil
}

// responseBuffers pools the buffers responses are marshaled into, in
// tiers a power of two apart from 4 KiB to 16 MiB (larger ones share one
// pool). gRPC's default pool has none between 32 KiB and 1 MiB, so each
// response in between — a CDS or EDS response of a few hundred resources
// — took a 1 MiB buffer, newly allocated and zeroed whenever the pool was
// empty, as it is while a thousand reconnecting streams are answered at
// once: with these tiers a buffer is at most twice its response.
var responseBuffers = mem.NewTieredBufferPool(responseBufferTiers()...)

func responseBufferTiers() []int {
	var tiers []int
	for size := 4 << 10; size <= 16<<20; size *= 2 {
		tiers = append(tiers, size)
	}
	return tiers
}

func (c *requestCodec) Unmarshal(data mem.BufferSlice, v any) error {
	var (
		msg   proto.Message
		shape requestShape
		set   func(requestFields)
	)
	switch req := v.(type) {
	case *discovery.DiscoveryRequest:
		msg, shape, set = req, sotwShape, func(f requestFields) { req.ResourceNames = f.names[0] }
	case *discovery.DeltaDiscoveryRequest:
		msg, shape, set = req, deltaShape, func(f requestFields) {
			req.ResourceNamesSubscribe, req.ResourceNamesUnsubscribe = f.names[0], f.names[1]
			req.InitialResourceVersions = f.versions
		}
	default:
		return c.proto.Unmarshal(data, v)
	}
	if len(data) == 1 {
		return c.unmarshal(data[0].ReadOnlyData(), msg, shape, set)
	}
	buf := requestBuffer(data.Len())
	defer releaseRequestBuffer(buf)
	*buf = (*buf)[:data.CopyTo(*buf)]
	return c.unmarshal(*buf, msg, shape, set)
}

// requestBuffers pools the buffers a request that came in several pieces
// (HTTP/2 frames of 16 KiB) is joined in. gRPC's own pool would do, but
// it clears every buffer it hands out, and in tiers that give a 45 KiB
// ACK — a SotW client repeating a thousand load assignment names — a
// 1 MiB buffer: clearing it cost more than decoding the request. Nothing
// decoded keeps the buffer (strings are copied or the cache's), so it is
// not cleared.
var requestBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledRequest is the largest buffer requestBuffers keeps: a larger
// request is rare enough to allocate.
const maxPooledRequest = 4 << 20

// requestBuffer returns a pooled buffer of n bytes, uncleared.
func requestBuffer(n int) *[]byte {
	if n > maxPooledRequest {
		b := make([]byte, n)
		return &b
	}
	buf := requestBuffers.Get().(*[]byte)
	if cap(*buf) < n {
		*buf = make([]byte, n)
	}
	*buf = (*buf)[:n]
	return buf
}

// releaseRequestBuffer gives buf back to requestBuffers unless it is
// larger than the pool keeps.
func releaseRequestBuffer(buf *[]byte) {
	if cap(*buf) <= maxPooledRequest {
		requestBuffers.Put(buf)
	}
}

// requestShape gives the field numbers of a request's type URL, of its
// (up to two) repeated resource-name fields and of its map of resource
// versions; 0 is no field.
type requestShape struct {
	typeURL  protowire.Number
	names    [2]protowire.Number
	versions protowire.Number
}

var (
	sotwShape  = requestShape{typeURL: 4, names: [2]protowire.Number{3}}                 // DiscoveryRequest
	deltaShape = requestShape{typeURL: 2, names: [2]protowire.Number{3, 4}, versions: 5} // DeltaDiscoveryRequest
)

// requestFields are the fields the codec decodes itself: the names per
// name field, and the map of versions.
type requestFields struct {
	names    [2][]string
	versions map[string]string
}

// fieldCounts counts a request's names per name field and the entries of
// its map of versions.
type fieldCounts struct {
	names    [2]int
	versions int
}

var errBadName = errors.New("xds: resource name is not valid UTF-8")

// unmarshal decodes b into msg: the resource names and versions here,
// handed to set, and the other fields by proto.Unmarshal of the bytes
// without them.
func (c *requestCodec) unmarshal(b []byte, msg proto.Message, shape requestShape, set func(requestFields)) error {
	if shape == sotwShape {
		if names, rest, ok := c.lists.recognise(b); ok {
			if err := proto.Unmarshal(rest, msg); err != nil {
				return err
			}
			set(requestFields{names: [2][]string{names}})
			return nil
		}
	}
	typeURL, count, region, ok := scanRequest(b, shape)
	if !ok || count == (fieldCounts{}) {
		return proto.Unmarshal(b, msg) // the proto package reports what is wrong
	}
	cacheable := shape == sotwShape && region.contiguous && count.names[0] >= minCachedList
	fields, rest, err := c.decodeFields(b, typeURL, shape, count)
	if err != nil {
		return err
	}
	if err := proto.Unmarshal(rest, msg); err != nil {
		return err
	}
	if cacheable {
		c.lists.put(typeURL, b[region.lo:region.hi], fields.names[0])
	}
	set(fields)
	return nil
}

// decodeFields returns the resource names of the request b, per name
// field, and its versions, and b without them. It reads them against one
// view of the cache.
func (c *requestCodec) decodeFields(b []byte, typeURL string, shape requestShape, count fieldCounts) (f requestFields, rest []byte, err error) {
	for i, n := range count.names {
		if n > 0 {
			f.names[i] = make([]string, 0, n)
		}
	}
	if count.versions > 0 {
		f.versions = make(map[string]string, count.versions)
	}
	rest = make([]byte, 0, 64)
	c.cache.read(func(v view) {
		served := v.resources(typeURL)
		for in := b; len(in) > 0 && err == nil; {
			num, typ, n := protowire.ConsumeTag(in)
			m := protowire.ConsumeFieldValue(num, typ, in[n:])
			field := in[:n+m]
			in = in[n+m:]
			if shape.versionsField(num, typ) {
				err = f.addVersion(field[n:], served)
			} else if i := shape.nameField(num, typ); i >= 0 {
				err = f.addName(i, field[n:], served)
			} else {
				rest = append(rest, field...)
			}
		}
	})
	return f, rest, err
}

// addVersion adds the map entry value of a versions field.
func (f *requestFields) addVersion(value []byte, served map[string]*resource) error {
	e, _ := protowire.ConsumeBytes(value)
	name, version, err := decodeVersion(e, served)
	if err != nil {
		return err
	}
	f.versions[name] = version
	return nil
}

// addName adds the value of a name field to the names of field i: the
// cache's string for a served name.
func (f *requestFields) addName(i int, value []byte, served map[string]*resource) error {
	v, _ := protowire.ConsumeBytes(value)
	if r := served[string(v)]; r != nil { // no allocation: a map lookup
		f.names[i] = append(f.names[i], r.name)
		return nil
	}
	if !utf8.Valid(v) {
		return fmt.Errorf("%w: %q", errBadName, v)
	}
	f.names[i] = append(f.names[i], string(v))
	return nil
}

// decodeVersion decodes one entry of a map of versions as the proto
// package decodes a map<string, string> entry: a key or value left out
// is "", the last of repeated ones counts, other fields are skipped. A
// served name is the cache's string, and so is its version when the
// current one.
func decodeVersion(b []byte, served map[string]*resource) (name, version string, err error) {
	var (
		r          *resource
		key, value []byte
	)
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", "", fmt.Errorf("xds: resource version: %w", protowire.ParseError(n))
		}
		if num > protowire.MaxValidNumber {
			return "", "", fmt.Errorf("xds: resource version: field number %d out of range", num)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return "", "", fmt.Errorf("xds: resource version: %w", protowire.ParseError(m))
		}
		if typ == protowire.BytesType && (num == 1 || num == 2) {
			v, _ := protowire.ConsumeBytes(b[n:])
			if num == 1 {
				key, r = v, served[string(v)]
			} else {
				value = v
			}
			if (num == 2 || r == nil) && !utf8.Valid(v) {
				return "", "", fmt.Errorf("%w: %q", errBadName, v)
			}
		}
		b = b[n+m:]
	}
	if r == nil {
		return string(key), string(value), nil
	}
	if string(value) == r.version { // no allocation: a comparison
		return r.name, r.version, nil
	}
	return r.name, string(value), nil
}

// versionsField reports whether a field is an entry of the shape's map
// of versions.
func (s requestShape) versionsField(num protowire.Number, typ protowire.Type) bool {
	return s.versions != 0 && num == s.versions && typ == protowire.BytesType
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
// name field and its versions, and finds where the names lie; ok is false
// for bytes that are not a well-formed message.
func scanRequest(b []byte, shape requestShape) (typeURL string, count fieldCounts, region nameRegion, ok bool) {
	region.contiguous = true
	gap := false // a field other than a name after the first name
	for pos := 0; pos < len(b); {
		num, typ, n := protowire.ConsumeTag(b[pos:])
		if n < 0 {
			return "", count, region, false
		}
		m := protowire.ConsumeFieldValue(num, typ, b[pos+n:])
		if m < 0 {
			return "", count, region, false
		}
		if i := shape.nameField(num, typ); i >= 0 {
			if count.names == [2]int{} {
				region.lo = pos
			} else if gap {
				region.contiguous = false
			}
			count.names[i]++
			region.hi = pos + n + m
		} else {
			switch {
			case shape.versionsField(num, typ):
				count.versions++
			case num == shape.typeURL && typ == protowire.BytesType:
				v, _ := protowire.ConsumeBytes(b[pos+n:])
				typeURL = string(v)
			}
			gap = count.names != [2]int{}
		}
		pos += n + m
	}
	return typeURL, count, region, true
}
