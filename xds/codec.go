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
}

func newRequestCodec(c *cache) *requestCodec {
	return &requestCodec{proto: encoding.GetCodecV2("proto"), cache: c}
}

func (c *requestCodec) Name() string { return "proto" }

func (c *requestCodec) Marshal(v any) (mem.BufferSlice, error) { return c.proto.Marshal(v) }

func (c *requestCodec) Unmarshal(data mem.BufferSlice, v any) error {
	switch req := v.(type) {
	case *discovery.DiscoveryRequest:
		buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
		defer buf.Free()
		return c.unmarshal(buf.ReadOnlyData(), req, sotwShape, func(names [2][]string) {
			req.ResourceNames = names[0]
		})
	case *discovery.DeltaDiscoveryRequest:
		buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
		defer buf.Free()
		return c.unmarshal(buf.ReadOnlyData(), req, deltaShape, func(names [2][]string) {
			req.ResourceNamesSubscribe, req.ResourceNamesUnsubscribe = names[0], names[1]
		})
	}
	return c.proto.Unmarshal(data, v)
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
	typeURL, count, ok := scanRequest(b, shape)
	if !ok || count == [2]int{} {
		return proto.Unmarshal(b, msg) // the proto package reports what is wrong
	}
	var names [2][]string
	for i, n := range count {
		if n > 0 {
			names[i] = make([]string, 0, n)
		}
	}
	rest := make([]byte, 0, 64)
	c.cache.mu.RLock()
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
			c.cache.mu.RUnlock()
			return fmt.Errorf("%w: %q", errBadName, v)
		}
		names[i] = append(names[i], string(v))
	}
	c.cache.mu.RUnlock()
	if err := proto.Unmarshal(rest, msg); err != nil {
		return err
	}
	set(names)
	return nil
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

// scanRequest reads a request's type URL and counts its resource names per
// name field; ok is false for bytes that are not a well-formed message.
func scanRequest(b []byte, shape requestShape) (typeURL string, names [2]int, ok bool) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", names, false
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return "", names, false
		}
		if num == shape.typeURL && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b[n:])
			typeURL = string(v)
		} else if i := shape.nameField(num, typ); i >= 0 {
			names[i]++
		}
		b = b[n+m:]
	}
	return typeURL, names, true
}
