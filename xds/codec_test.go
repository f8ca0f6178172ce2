package xds

import (
	"math/rand"
	"strconv"
	"testing"
	"unsafe"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// codecCache holds clusters c0…c99, so that names decode both ways: shared
// with the cache and allocated.
func codecCache() *cache {
	c := newCache([]string{ClusterType, EndpointType})
	for i := range 100 {
		n := "c" + strconv.Itoa(i)
		c.types[ClusterType][n] = &resource{typeURL: ClusterType, name: n}
	}
	return c
}

// checkCodec decodes b with the request codec and with proto.Unmarshal and
// requires the same message, or an error from both.
func checkCodec(t *testing.T, codec *requestCodec, b []byte) {
	t.Helper()
	var got, want discovery.DiscoveryRequest
	gotErr := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &got)
	wantErr := proto.Unmarshal(b, &want)
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("codec error %v, proto error %v, for %x", gotErr, wantErr, b)
	}
	if wantErr == nil && !proto.Equal(&got, &want) {
		t.Fatalf("codec decoded\n%v\nproto decoded\n%v", &got, &want)
	}
}

// TestRequestCodecMatchesProto: random requests — served and unknown
// names, wildcards, nodes, NACK details, unknown fields, fields in any
// order — decode to what proto.Unmarshal gives, and served names share the
// cache's strings.
func TestRequestCodecMatchesProto(t *testing.T) {
	codec := newRequestCodec(codecCache())
	rng := rand.New(rand.NewSource(1))
	for i := range 2000 {
		req := &discovery.DiscoveryRequest{
			VersionInfo:   strconv.Itoa(rng.Intn(5)),
			ResponseNonce: strconv.Itoa(rng.Intn(5)),
			TypeUrl:       []string{ClusterType, EndpointType, "type.example/unknown", ""}[rng.Intn(4)],
		}
		if rng.Intn(3) == 0 {
			req.Node = &corev3.Node{Id: "node-" + strconv.Itoa(i)}
		}
		if rng.Intn(4) == 0 {
			req.ErrorDetail = &status.Status{Code: 3, Message: "rejected"}
		}
		for range rng.Intn(20) {
			switch rng.Intn(3) {
			case 0:
				req.ResourceNames = append(req.ResourceNames, "c"+strconv.Itoa(rng.Intn(150)))
			case 1:
				req.ResourceNames = append(req.ResourceNames, "*")
			default:
				req.ResourceNames = append(req.ResourceNames, "")
			}
		}
		b, err := proto.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		if rng.Intn(3) == 0 { // an unknown field, then a repeated field out of order
			b = protowire.AppendTag(b, 99, protowire.BytesType)
			b = protowire.AppendString(b, "future")
			b = protowire.AppendTag(b, fieldResourceNames, protowire.BytesType)
			b = protowire.AppendString(b, "c7")
		}
		checkCodec(t, codec, b)
	}

	// Served names are the cache's strings: no copy per request.
	b, _ := proto.Marshal(&discovery.DiscoveryRequest{TypeUrl: ClusterType, ResourceNames: []string{"c5"}})
	var req discovery.DiscoveryRequest
	if err := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &req); err != nil {
		t.Fatal(err)
	}
	if want := codec.cache.types[ClusterType]["c5"].name; unsafeData(req.ResourceNames[0]) != unsafeData(want) {
		t.Error("a served name was copied, not shared with the cache")
	}
}

// TestRequestCodecRejectsBadNames: a name that is not UTF-8 is an error,
// as proto.Unmarshal makes it.
func TestRequestCodecRejectsBadNames(t *testing.T) {
	codec := newRequestCodec(codecCache())
	var b []byte
	b = protowire.AppendTag(b, fieldTypeURL, protowire.BytesType)
	b = protowire.AppendString(b, ClusterType)
	b = protowire.AppendTag(b, fieldResourceNames, protowire.BytesType)
	b = protowire.AppendBytes(b, []byte{0xff, 0xfe})
	checkCodec(t, codec, b)
	var req discovery.DiscoveryRequest
	if err := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &req); err == nil {
		t.Fatal("invalid UTF-8 name accepted")
	}
}

// FuzzRequestCodec: for any bytes, the codec and proto.Unmarshal agree.
func FuzzRequestCodec(f *testing.F) {
	for _, req := range []*discovery.DiscoveryRequest{
		{TypeUrl: ClusterType, ResourceNames: []string{"c1", "c2", "nope"}},
		{TypeUrl: EndpointType, ResourceNames: []string{"*"}, Node: &corev3.Node{Id: "n"}},
		{VersionInfo: "1", ResponseNonce: "2", ErrorDetail: &status.Status{Message: "x"}},
	} {
		b, _ := proto.Marshal(req)
		f.Add(b)
	}
	codec := newRequestCodec(codecCache())
	f.Fuzz(func(t *testing.T, b []byte) { checkCodec(t, codec, b) })
}

// unsafeData returns the address of s's bytes.
func unsafeData(s string) *byte { return unsafe.StringData(s) }
