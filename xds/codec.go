package xds

import (
	"errors"
	"fmt"
	"unicode/utf8"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// requestCodec is the server's gRPC codec. It decodes a SotW
// DiscoveryRequest's resource names itself: a SotW client repeats its
// whole subscription in every ACK — an Envoy wanting every cluster sends
// thousands of names per change — and decoding them is most of what an
// ACK costs. A name the server serves is answered with the cache's own
// string instead of a fresh one, so an ACK allocates no strings and gives
// the garbage collector nothing to do. Everything else is the proto codec.
type requestCodec struct {
	proto encoding.CodecV2
	cache *cache
}

func newRequestCodec(c *cache) *requestCodec {
	return &requestCodec{proto: encoding.GetCodecV2("proto"), cache: c}
}

func (c *requestCodec) Name() string { return "proto" }

func (c *requestCodec) Marshal(v any) (mem.BufferSlice, error) { return c.proto.Marshal(v) }

func (c *requestCodec) Unmarshal(data mem.BufferSlice, v any) error {
	req, ok := v.(*discovery.DiscoveryRequest)
	if !ok {
		return c.proto.Unmarshal(data, v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	return c.unmarshalRequest(buf.ReadOnlyData(), req)
}

// Field numbers of DiscoveryRequest.
const (
	fieldTypeURL       = 4
	fieldResourceNames = 3
)

var errBadName = errors.New("xds: resource name is not valid UTF-8")

// unmarshalRequest decodes b into req: the resource names here, the
// other fields by proto.Unmarshal of the bytes without them.
func (c *requestCodec) unmarshalRequest(b []byte, req *discovery.DiscoveryRequest) error {
	typeURL, count, ok := scanRequest(b)
	if !ok || count == 0 {
		return proto.Unmarshal(b, req) // the proto package reports what is wrong
	}
	names := make([]string, 0, count)
	rest := make([]byte, 0, 64)
	c.cache.mu.RLock()
	served := c.cache.types[typeURL]
	for in := b; len(in) > 0; {
		num, typ, n := protowire.ConsumeTag(in)
		m := protowire.ConsumeFieldValue(num, typ, in[n:])
		field := in[:n+m]
		in = in[n+m:]
		if num != fieldResourceNames || typ != protowire.BytesType {
			rest = append(rest, field...)
			continue
		}
		v, _ := protowire.ConsumeBytes(field[n:])
		if r := served[string(v)]; r != nil { // no allocation: a map lookup
			names = append(names, r.name)
			continue
		}
		if !utf8.Valid(v) {
			c.cache.mu.RUnlock()
			return fmt.Errorf("%w: %q", errBadName, v)
		}
		names = append(names, string(v))
	}
	c.cache.mu.RUnlock()
	if err := proto.Unmarshal(rest, req); err != nil {
		return err
	}
	req.ResourceNames = names
	return nil
}

// scanRequest reads a request's type URL and counts its resource names;
// ok is false for bytes that are not a well-formed message.
func scanRequest(b []byte) (typeURL string, names int, ok bool) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", 0, false
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return "", 0, false
		}
		if typ == protowire.BytesType {
			switch num {
			case fieldTypeURL:
				v, _ := protowire.ConsumeBytes(b[n:])
				typeURL = string(v)
			case fieldResourceNames:
				names++
			}
		}
		b = b[n+m:]
	}
	return typeURL, names, true
}
