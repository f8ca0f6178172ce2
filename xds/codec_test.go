package xds

import (
	"bytes"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// codecCache holds clusters c0…c99 at versions v0…v99, so that names and
// versions decode both ways: shared with the cache and allocated.
func codecCache() *cache {
	c := newCache([]string{ClusterType, EndpointType}, nil)
	for i := range 100 {
		n := "c" + strconv.Itoa(i)
		c.types[ClusterType][n] = &resource{typeURL: ClusterType, name: n, version: "v" + strconv.Itoa(i)}
	}
	return c
}

// checkCodec decodes b as a SotW and as a Delta request with the request
// codec and with proto.Unmarshal, and requires the same messages, or an
// error from both.
func checkCodec(t *testing.T, codec *requestCodec, b []byte) {
	t.Helper()
	for _, newMsg := range []func() proto.Message{
		func() proto.Message { return &discovery.DiscoveryRequest{} },
		func() proto.Message { return &discovery.DeltaDiscoveryRequest{} },
	} {
		got, want := newMsg(), newMsg()
		gotErr := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, got)
		wantErr := proto.Unmarshal(b, want)
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("%T: codec error %v, proto error %v, for %x", got, gotErr, wantErr, b)
		}
		if wantErr == nil && !proto.Equal(got, want) {
			t.Fatalf("codec decoded\n%v\nproto decoded\n%v", got, want)
		}
	}
}

// randomVersions returns up to 20 names, served or unknown, with versions:
// current for served ones, or not.
func randomVersions(rng *rand.Rand) map[string]string {
	out := map[string]string{}
	for range rng.Intn(20) {
		i := rng.Intn(150)
		v := "v" + strconv.Itoa(i)
		if rng.Intn(3) == 0 {
			v = "v" + strconv.Itoa(rng.Intn(150))
		}
		if rng.Intn(10) == 0 {
			v = ""
		}
		out["c"+strconv.Itoa(i)] = v
	}
	return out
}

// randomNames returns up to 20 names: served, unknown, wildcard, empty.
func randomNames(rng *rand.Rand) []string {
	var out []string
	for range rng.Intn(20) {
		switch rng.Intn(3) {
		case 0:
			out = append(out, "c"+strconv.Itoa(rng.Intn(150)))
		case 1:
			out = append(out, "*")
		default:
			out = append(out, "")
		}
	}
	return out
}

// TestRequestCodecMatchesProto: random SotW and Delta requests — served
// and unknown names, wildcards, nodes, NACK details, unknown fields, fields
// in any order — decode to what proto.Unmarshal gives, and served names
// share the cache's strings.
func TestRequestCodecMatchesProto(t *testing.T) {
	codec := newRequestCodec(codecCache())
	rng := rand.New(rand.NewSource(1))
	types := []string{ClusterType, EndpointType, "type.example/unknown", ""}
	for i := range 2000 {
		var node *corev3.Node
		if rng.Intn(3) == 0 {
			node = &corev3.Node{Id: "node-" + strconv.Itoa(i)}
		}
		var detail *status.Status
		if rng.Intn(4) == 0 {
			detail = &status.Status{Code: 3, Message: "rejected"}
		}
		var msg proto.Message
		names := sotwShape.names[0]
		if i%2 == 0 {
			msg = &discovery.DiscoveryRequest{
				VersionInfo: strconv.Itoa(rng.Intn(5)), ResponseNonce: strconv.Itoa(rng.Intn(5)),
				TypeUrl: types[rng.Intn(len(types))], Node: node, ErrorDetail: detail, ResourceNames: randomNames(rng),
			}
		} else {
			msg = &discovery.DeltaDiscoveryRequest{
				ResponseNonce: strconv.Itoa(rng.Intn(5)), TypeUrl: types[rng.Intn(len(types))], Node: node, ErrorDetail: detail,
				ResourceNamesSubscribe: randomNames(rng), ResourceNamesUnsubscribe: randomNames(rng),
				InitialResourceVersions: randomVersions(rng),
			}
			names = deltaShape.names[rng.Intn(2)]
		}
		b, err := proto.Marshal(msg)
		if err != nil {
			t.Fatal(err)
		}
		if rng.Intn(3) == 0 { // an unknown field, then a repeated field out of order
			b = protowire.AppendTag(b, 99, protowire.BytesType)
			b = protowire.AppendString(b, "future")
			b = protowire.AppendTag(b, names, protowire.BytesType)
			b = protowire.AppendString(b, "c7")
		}
		checkCodec(t, codec, b)
	}

	// Served names are the cache's strings: no copy per request.
	want := unsafeData(codec.cache.types[ClusterType]["c5"].name)
	b, _ := proto.Marshal(&discovery.DiscoveryRequest{TypeUrl: ClusterType, ResourceNames: []string{"c5"}})
	var req discovery.DiscoveryRequest
	if err := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &req); err != nil {
		t.Fatal(err)
	}
	b, _ = proto.Marshal(&discovery.DeltaDiscoveryRequest{TypeUrl: ClusterType, ResourceNamesSubscribe: []string{"c5"}, ResourceNamesUnsubscribe: []string{"c5"}})
	var delta discovery.DeltaDiscoveryRequest
	if err := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &delta); err != nil {
		t.Fatal(err)
	}
	for _, got := range []string{req.ResourceNames[0], delta.ResourceNamesSubscribe[0], delta.ResourceNamesUnsubscribe[0]} {
		if unsafeData(got) != want {
			t.Error("a served name was copied, not shared with the cache")
		}
	}
}

// TestRequestCodecVersions: the entries of a Delta request's
// initial_resource_versions decode as proto.Unmarshal decodes them, odd
// ones included, and a served name and its current version are the
// cache's strings.
func TestRequestCodecVersions(t *testing.T) {
	codec := newRequestCodec(codecCache())
	field := deltaShape.versions
	for _, b := range [][]byte{
		entryRequest(field, wireString(1, "c4"), wireString(2, "v4")),
		entryRequest(field, wireString(2, "v4"), wireString(1, "c4")),                                    // value first
		entryRequest(field, wireString(1, "c4")),                                                         // no value
		entryRequest(field, wireString(2, "v4")),                                                         // no key
		entryRequest(field),                                                                              // empty entry
		entryRequest(field, wireString(1, "c4"), wireString(2, "v4"), wireString(1, "c5")),               // repeated key: the last counts
		entryRequest(field, wireString(1, "c1"), wireString(2, "v9")),                                    // a repeated entry: the last counts
		entryRequest(field, wireString(1, "c4"), wireVarint(1), wireString(2, "v4"), wireVarint(2)),      // wrong wire types: skipped
		entryRequest(field, wireString(1, "c4"), wireString(3, "x"), wireVarint(9), wireString(2, "v4")), // unknown fields: dropped
		entryRequest(field, wireString(1, "c4"), wireString(2, "\xff")),                                  // invalid UTF-8
		entryRequest(field, wireString(1, "\xff"), wireString(2, "v4")),
		entryRequest(field, wireString(1, "\xff"), wireString(1, "c4"), wireString(2, "v4")),                      // invalid, then overwritten
		entryRequest(field, truncatedField),                                                                       // truncated
		entryRequest(field, func(b []byte) []byte { return protowire.AppendTag(b, 1<<29, protowire.VarintType) }), // field number out of range
		entryRequest(field, func(b []byte) []byte { return protowire.AppendTag(b, 1<<29-1, protowire.VarintType) }),
		protowire.AppendVarint(protowire.AppendTag(entryRequest(field, wireString(1, "c4")), field, protowire.VarintType), 1), // the map's field as a varint: unknown
	} {
		checkCodec(t, codec, b)
	}

	checkVersionsShared(t, codec)
}

// TestRequestCodecRejectsBadNames: a name that is not UTF-8 is an error,
// as proto.Unmarshal makes it (checkCodec also decodes the bytes as a
// Delta request, where field 3 is a name too and field 4 a name field).
func TestRequestCodecRejectsBadNames(t *testing.T) {
	codec := newRequestCodec(codecCache())
	var b []byte
	b = protowire.AppendTag(b, sotwShape.typeURL, protowire.BytesType)
	b = protowire.AppendString(b, ClusterType)
	b = protowire.AppendTag(b, sotwShape.names[0], protowire.BytesType)
	b = protowire.AppendBytes(b, []byte{0xff, 0xfe})
	checkCodec(t, codec, b)
	var req discovery.DiscoveryRequest
	if err := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &req); err == nil {
		t.Fatal("invalid UTF-8 name accepted")
	}
}

// FuzzRequestCodec: for any bytes, the codec and proto.Unmarshal agree,
// read as a SotW and as a Delta request.
func FuzzRequestCodec(f *testing.F) {
	for _, req := range []proto.Message{
		&discovery.DiscoveryRequest{TypeUrl: ClusterType, ResourceNames: []string{"c1", "c2", "nope"}},
		&discovery.DiscoveryRequest{TypeUrl: EndpointType, ResourceNames: []string{"*"}, Node: &corev3.Node{Id: "n"}},
		&discovery.DiscoveryRequest{VersionInfo: "1", ResponseNonce: "2", ErrorDetail: &status.Status{Message: "x"}},
		&discovery.DeltaDiscoveryRequest{TypeUrl: ClusterType, ResourceNamesSubscribe: []string{"c1", "nope"}, ResourceNamesUnsubscribe: []string{"c2"}},
		&discovery.DiscoveryRequest{TypeUrl: ClusterType, ResourceNames: longList(70)}, // cached lists
		&discovery.DiscoveryRequest{TypeUrl: ClusterType, ResponseNonce: "1", ResourceNames: longList(70)},
		&discovery.DeltaDiscoveryRequest{TypeUrl: ClusterType, ResourceNamesSubscribe: []string{"*"},
			InitialResourceVersions: map[string]string{"c1": "v1", "c2": "v3", "nope": "v1", "": ""}},
	} {
		b, _ := proto.Marshal(req)
		f.Add(b)
	}
	codec := newRequestCodec(codecCache())
	f.Fuzz(func(t *testing.T, b []byte) { checkCodec(t, codec, b) })
}

// unsafeData returns the address of s's bytes.
func unsafeData(s string) *byte { return unsafe.StringData(s) }

// TestRequestCodecListCache: a long SotW name list sent again is served
// from the codec's list cache — the same slice — and every variation (a
// changed name, another type, a field among the names, other fields
// around them) still decodes exactly as proto.Unmarshal does.
func TestRequestCodecListCache(t *testing.T) {
	codec := newRequestCodec(codecCache())
	long := make([]string, 80)
	for i := range long {
		long[i] = "c" + strconv.Itoa(i%100)
	}
	decode := func(b []byte) []string {
		t.Helper()
		checkCodec(t, codec, b)
		var req discovery.DiscoveryRequest
		if err := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &req); err != nil {
			t.Fatal(err)
		}
		return req.ResourceNames
	}
	ack := func(nonce string, names []string) []byte {
		b, err := proto.Marshal(&discovery.DiscoveryRequest{TypeUrl: ClusterType, VersionInfo: nonce, ResponseNonce: nonce, ResourceNames: names})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := decode(ack("1", long))
	again := decode(ack("2", long)) // other fields differ, the list does not
	if &first[0] != &again[0] {
		t.Error("the same list was decoded again, not served from the cache")
	}

	changed := slices.Clone(long)
	changed[40] = "nope"
	if got := decode(ack("3", changed)); got[40] != "nope" || &got[0] == &first[0] {
		t.Errorf("a changed list was served from the cache: %v", got[38:42])
	}
	other, _ := proto.Marshal(&discovery.DiscoveryRequest{TypeUrl: EndpointType, ResourceNames: long})
	if got := decode(other); &got[0] == &first[0] {
		t.Error("a list of another type was served from the cache")
	}
	// A field among the names: decoded, not cached.
	b := ack("4", long[:70])
	b = protowire.AppendTag(b, 99, protowire.BytesType)
	b = protowire.AppendString(b, "interleaved")
	b = protowire.AppendTag(b, sotwShape.names[0], protowire.BytesType)
	b = protowire.AppendString(b, "c1")
	if got := decode(b); len(got) != 71 || got[70] != "c1" {
		t.Errorf("interleaved list decoded as %d names", len(got))
	}
	// The cache stays bounded.
	for i := range 3 * maxCachedLists {
		decode(ack("5", append(slices.Clone(long), "extra-"+strconv.Itoa(i))))
	}
	codec.lists.mu.Lock()
	n := len(codec.lists.entries)
	codec.lists.mu.Unlock()
	if n > maxCachedLists {
		t.Errorf("list cache holds %d lists, want at most %d", n, maxCachedLists)
	}
}

// longList returns n served and unserved names, long enough to be cached.
func longList(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "c" + strconv.Itoa(i*3%150)
	}
	return out
}

// TestResponseMarshal: responses of every size — below the pooling
// threshold, in the pooled tiers and above the largest — marshal to the
// bytes proto.Marshal gives, also into buffers freed by a larger response
// before and taken from the pool again.
func TestResponseMarshal(t *testing.T) {
	codec := newRequestCodec(codecCache())
	for _, c := range []struct{ n, size int }{
		{0, 0},        // empty
		{2, 100},      // below the pooling threshold
		{10, 500},     // 4 KiB tier
		{100, 400},    // 64 KiB tier, where the default pool gave 1 MiB
		{300, 1000},   // 512 KiB tier
		{1100, 1000},  // 2 MiB tier
		{17, 1 << 20}, // above the largest tier
	} {
		checkMarshal(t, codec, manyClusters(t, c.n, c.size, 'a'))
		// The same tier again, smaller: a reused buffer, written over.
		checkMarshal(t, codec, manyClusters(t, c.n*2/3, c.size, 'b'))
	}
	checkMarshal(t, codec, manyDeltaClusters(t))
	// A response between gRPC's 32 KiB and 1 MiB tiers takes a buffer at
	// most twice its size.
	for _, size := range []int{40 << 10, 100 << 10, 600 << 10} {
		b := responseBuffers.Get(size)
		if len(*b) != size || cap(*b) >= 2*size {
			t.Errorf("a %d-byte response takes a buffer of length %d, capacity %d", size, len(*b), cap(*b))
		}
		responseBuffers.Put(b)
	}
	// What is not a proto message is the proto codec's to refuse.
	if _, err := codec.Marshal(struct{}{}); err == nil {
		t.Fatal("a non-proto value marshaled")
	}
}

// entryRequest is a delta request with initial versions and one more
// entry of the map field made of parts, as raw wire bytes.
func entryRequest(field protowire.Number, parts ...func([]byte) []byte) []byte {
	b, _ := proto.Marshal(&discovery.DeltaDiscoveryRequest{TypeUrl: ClusterType,
		InitialResourceVersions: map[string]string{"c1": "v1", "c2": "old", "nope": "v3"}})
	var e []byte
	for _, p := range parts {
		e = p(e)
	}
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return protowire.AppendBytes(b, e)
}

// wireString is a string field num of value v.
func wireString(num protowire.Number, v string) func([]byte) []byte {
	return func(b []byte) []byte {
		return protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), v)
	}
}

// wireVarint is a varint field num.
func wireVarint(num protowire.Number) func([]byte) []byte {
	return func(b []byte) []byte {
		return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), 7)
	}
}

// truncatedField is a string field whose length runs past the entry.
func truncatedField(b []byte) []byte { return append(b, 0x0a, 0x05, 'c') }

// checkVersionsShared: decoded initial versions share the cache's strings
// for names it serves, and for versions equal to the served ones.
func checkVersionsShared(t *testing.T, codec *requestCodec) {
	t.Helper()
	b, _ := proto.Marshal(&discovery.DeltaDiscoveryRequest{TypeUrl: ClusterType,
		InitialResourceVersions: map[string]string{"c5": "v5", "c6": "old", "nope": "v5"}})
	var req discovery.DeltaDiscoveryRequest
	if err := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &req); err != nil {
		t.Fatal(err)
	}
	served := codec.cache.types[ClusterType]
	for name, v := range req.InitialResourceVersions {
		var sharedName, sharedVersion bool
		r := served[name]
		if r != nil {
			sharedName = unsafeData(name) == unsafeData(r.name)
			sharedVersion = unsafeData(v) == unsafeData(r.version)
		}
		if sharedName != (r != nil) {
			t.Errorf("name %s shared with the cache: %v, want %v", name, sharedName, r != nil)
		}
		if want := r != nil && v == r.version; sharedVersion != want {
			t.Errorf("version %s of %s shared with the cache: %v, want %v", v, name, sharedVersion, want)
		}
	}
	if len(req.InitialResourceVersions) != 3 {
		t.Fatalf("decoded %v, want 3 versions", req.InitialResourceVersions)
	}
}

// manyClusters is a response of n clusters of about size bytes each; fill
// picks their bytes, so that a reused buffer's old content would show.
func manyClusters(t *testing.T, n, size int, fill byte) proto.Message {
	t.Helper()
	resp := &discovery.DiscoveryResponse{VersionInfo: "v", TypeUrl: ClusterType, Nonce: strconv.Itoa(n)}
	for i := range n {
		raw := bytes.Repeat([]byte{fill}, size)
		r, err := newResource(ClusterType, "c"+strconv.Itoa(i), &clusterv3.Cluster{Name: "c" + strconv.Itoa(i), AltStatName: string(raw)})
		if err != nil {
			t.Fatal(err)
		}
		resp.Resources = append(resp.Resources, r.any)
	}
	return resp
}

// manyDeltaClusters is a delta response of 200 clusters and a removal.
func manyDeltaClusters(t *testing.T) proto.Message {
	t.Helper()
	delta := &discovery.DeltaDiscoveryResponse{SystemVersionInfo: "v", TypeUrl: ClusterType, Nonce: "1", RemovedResources: []string{"gone"}}
	for i := range 200 {
		r, err := newResource(ClusterType, "c"+strconv.Itoa(i), &clusterv3.Cluster{Name: "c" + strconv.Itoa(i), AltStatName: strings.Repeat("x", 300)})
		if err != nil {
			t.Fatal(err)
		}
		delta.Resources = append(delta.Resources, &discovery.Resource{Name: r.name, Version: r.version, Resource: r.any})
	}
	return delta
}

// checkMarshal: the codec marshals msg to the bytes proto.Marshal does.
func checkMarshal(t *testing.T, codec *requestCodec, msg proto.Message) {
	t.Helper()
	want, err := proto.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	data, err := codec.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	if got := data.Materialize(); !bytes.Equal(got, want) {
		t.Fatalf("%d-byte response: codec marshaled %d bytes unlike proto.Marshal", len(want), len(got))
	}
	data.Free() // as gRPC does once written
}
