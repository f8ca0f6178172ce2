package xds

import (
	"fmt"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
)

// Response encoding. Every stream sends the same resources — a change of
// one load assignment goes to its hundred subscribers, a connecting
// wildcard client gets every cluster — and only a response's version and
// nonce are its own. So the server encodes responses itself, in the
// proto wire format, instead of building a DiscoveryResponse and
// marshaling it: a resource's serialized bytes, shared by every stream,
// are referenced by the response's buffers rather than copied into them
// (values of inlineValue bytes and more), and what is copied, the small
// fields around them, is written straight from the resource, without
// proto reflection. The output is byte for byte what marshaling the
// equivalent message deterministically gives (encode_test.go).

// inlineValue is the size from which a resource's bytes are referenced
// rather than copied: below it, a buffer of its own costs more than the
// copy.
const inlineValue = 1024

// Field numbers of the responses and the messages in them, as in
// envoy/service/discovery/v3/discovery.proto and google/protobuf/any.proto.
const (
	sotwVersionField   = 1 // DiscoveryResponse.version_info
	sotwResourcesField = 2 // DiscoveryResponse.resources
	sotwTypeField      = 4 // DiscoveryResponse.type_url
	sotwNonceField     = 5 // DiscoveryResponse.nonce

	deltaVersionField   = 1 // DeltaDiscoveryResponse.system_version_info
	deltaResourcesField = 2 // DeltaDiscoveryResponse.resources
	deltaTypeField      = 4 // DeltaDiscoveryResponse.type_url
	deltaNonceField     = 5 // DeltaDiscoveryResponse.nonce
	deltaRemovedField   = 6 // DeltaDiscoveryResponse.removed_resources

	resourceVersionField = 1 // Resource.version
	resourceAnyField     = 2 // Resource.resource
	resourceNameField    = 3 // Resource.name

	anyTypeField  = 1 // Any.type_url
	anyValueField = 2 // Any.value
)

// outgoing is a response for the server's codec to encode (Marshal).
type outgoing struct {
	kind StreamKind
	u    *update
}

// encode returns the response's wire encoding.
func (o *outgoing) encode() (mem.BufferSlice, error) {
	if o.u.first != nil {
		return o.u.first.encode(o.kind, o.u)
	}
	var w responseWriter
	if o.kind == Delta {
		w.start(deltaSize(o.u))
		w.delta(o.u)
	} else {
		w.start(sotwSize(o.u))
		w.sotw(o.u)
	}
	return w.finish()
}

// stringField is the size of a string (or bytes) field of s that proto3
// omits when empty.
func stringField(s int) int {
	if s == 0 {
		return 0
	}
	return protowire.SizeTag(1) + protowire.SizeBytes(s)
}

// anySize is the size of a resource's Any message.
func anySize(r *resource) int {
	return stringField(len(r.any.TypeUrl)) + stringField(len(r.any.Value))
}

// inlined is how much of a resource's bytes the head holds.
func inlined(r *resource) int {
	if len(r.any.Value) >= inlineValue {
		return 0
	}
	return len(r.any.Value)
}

// sotwSize returns the size of u's head as a DiscoveryResponse: all but
// the referenced values.
func sotwSize(u *update) int {
	n := stringField(len(u.version)) + stringField(len(u.typeURL)) + stringField(len(u.nonce))
	for _, r := range u.resources {
		a := anySize(r)
		n += protowire.SizeTag(sotwResourcesField) + protowire.SizeVarint(uint64(a)) + a - len(r.any.Value) + inlined(r)
	}
	return n
}

// deltaEntrySize is the size of r as a Delta Resource message.
func deltaEntrySize(r *resource) int {
	a := anySize(r)
	return stringField(len(r.version)) + protowire.SizeTag(resourceAnyField) + protowire.SizeBytes(a) + stringField(len(r.name))
}

// deltaSize returns the size of u's head as a DeltaDiscoveryResponse.
func deltaSize(u *update) int {
	n := stringField(len(u.version)) + stringField(len(u.typeURL)) + stringField(len(u.nonce))
	for _, r := range u.resources {
		e := deltaEntrySize(r)
		n += protowire.SizeTag(deltaResourcesField) + protowire.SizeVarint(uint64(e)) + e - len(r.any.Value) + inlined(r)
	}
	for _, name := range u.removed {
		n += protowire.SizeTag(deltaRemovedField) + protowire.SizeBytes(len(name))
	}
	return n
}

// responseWriter writes a response's head, the bytes it copies, into one
// buffer of the size computed ahead, and cuts it around each referenced
// value.
type responseWriter struct {
	// root holds head's array; nil when head is not pooled.
	root mem.Buffer
	head []byte
	// size is the head's size, computed ahead.
	size int
	// cut is where the part of head not yet in out starts.
	cut int
	out mem.BufferSlice
}

// start prepares a head of size bytes.
func (w *responseWriter) start(size int) {
	w.size = size
	if mem.IsBelowBufferPoolingThreshold(size) {
		w.head = make([]byte, 0, size)
		return
	}
	buf := responseBuffers.Get(size)
	w.root = mem.NewBuffer(buf, responseBuffers)
	w.head = (*buf)[:0]
}

// finish returns the buffers written. It fails, writing nothing, if the
// head is not the size computed: a bug, never a malformed response.
func (w *responseWriter) finish() (mem.BufferSlice, error) {
	if len(w.head) != w.size {
		w.out.Free()
		if w.root != nil {
			w.root.Free()
		}
		return nil, fmt.Errorf("xds: encoded response head is %d bytes, not %d", len(w.head), w.size)
	}
	w.flushHead()
	if w.root != nil {
		w.root.Free() // the slices cut hold their own references
	}
	return w.out, nil
}

// flushHead appends the head written since the last cut to out.
func (w *responseWriter) flushHead() {
	if w.cut == len(w.head) {
		return
	}
	if w.root != nil {
		w.out = append(w.out, w.root.Slice(w.cut, len(w.head)))
	} else {
		w.out = append(w.out, mem.SliceBuffer(w.head[w.cut:]))
	}
	w.cut = len(w.head)
}

func (w *responseWriter) str(num protowire.Number, s string) {
	if s == "" {
		return
	}
	w.head = protowire.AppendTag(w.head, num, protowire.BytesType)
	w.head = protowire.AppendString(w.head, s)
}

// any writes r's Any message, referencing its value when large.
func (w *responseWriter) any(r *resource) {
	w.str(anyTypeField, r.any.TypeUrl)
	v := r.any.Value
	if len(v) == 0 {
		return
	}
	w.head = protowire.AppendTag(w.head, anyValueField, protowire.BytesType)
	w.head = protowire.AppendVarint(w.head, uint64(len(v)))
	if len(v) < inlineValue {
		w.head = append(w.head, v...)
		return
	}
	w.flushHead()
	w.out = append(w.out, mem.SliceBuffer(v))
}

func (w *responseWriter) sotw(u *update) {
	w.str(sotwVersionField, u.version)
	for _, r := range u.resources {
		w.head = protowire.AppendTag(w.head, sotwResourcesField, protowire.BytesType)
		w.head = protowire.AppendVarint(w.head, uint64(anySize(r)))
		w.any(r)
	}
	w.str(sotwTypeField, u.typeURL)
	w.str(sotwNonceField, u.nonce)
}

func (w *responseWriter) delta(u *update) {
	w.str(deltaVersionField, u.version)
	for _, r := range u.resources {
		w.head = protowire.AppendTag(w.head, deltaResourcesField, protowire.BytesType)
		w.head = protowire.AppendVarint(w.head, uint64(deltaEntrySize(r)))
		w.str(resourceVersionField, r.version)
		w.head = protowire.AppendTag(w.head, resourceAnyField, protowire.BytesType)
		w.head = protowire.AppendVarint(w.head, uint64(anySize(r)))
		w.any(r)
		w.str(resourceNameField, r.name)
	}
	w.str(deltaTypeField, u.typeURL)
	w.str(deltaNonceField, u.nonce)
	for _, name := range u.removed {
		w.head = protowire.AppendTag(w.head, deltaRemovedField, protowire.BytesType)
		w.head = protowire.AppendString(w.head, name)
	}
}
