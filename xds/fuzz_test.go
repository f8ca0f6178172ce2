package xds_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"

	"github.com/meshd/meshd/xds"
)

// fuzzTypes are the type URLs a fuzzed request may carry: the served ones,
// an empty one (a protocol error that ends the stream) and unknown ones.
var fuzzTypes = []string{
	xds.ListenerType, xds.RouteType, xds.ClusterType, xds.EndpointType,
	"", "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret", "x", xds.ClusterType,
}

// fuzzPool are the names a fuzzed subscription picks from: served ones,
// unknown ones and the wildcard.
var fuzzPool = []string{"l0", "l1", "r0", "r1", "c0", "c1", "c2", "nope", "*", "", "l0 ", "c0\x00"}

// adsOp is one decoded fuzz operation.
type adsOp struct {
	typeURL string
	kind    byte
	names   []string
	arg     byte
}

// decodeOps turns fuzz bytes into at most 64 operations. Each operation is
// an op byte (type in the high bits, kind in the low three) and, for most
// kinds, an argument byte.
func decodeOps(data []byte) []adsOp {
	var ops []adsOp
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	for len(data) > 0 && len(ops) < 64 {
		b := next()
		op := adsOp{typeURL: fuzzTypes[(b>>5)&7], kind: b & 7, arg: next()}
		switch op.kind {
		case 0, 7: // a few names from the pool
			for i := 0; i < int(op.arg%6); i++ {
				op.names = append(op.names, fuzzPool[int(next())%len(fuzzPool)])
			}
		case 6: // a huge list: up to 16,320 names, many of them repeated
			for i := 0; i < int(op.arg)*64; i++ {
				op.names = append(op.names, "huge-"+strconv.Itoa(i%(int(op.arg)*48+1)))
			}
		}
		ops = append(ops, op)
	}
	return ops
}

// fuzzServer is the server a fuzz target's inputs share: serving each
// input from a fresh server would spend the time starting servers.
type fuzzServer struct {
	f      *fixture
	cc     *grpc.ClientConn
	nextID atomic.Uint64
}

// fuzzMaxNames is the fuzz server's WithMaxSubscribedNames: a few huge
// name lists exceed it, fewer stay below.
const fuzzMaxNames = 4000

func newFuzzServer(tb testing.TB) *fuzzServer {
	f := newFixture(tb, xds.WithRetention(time.Minute, 16), xds.WithMaxSubscribedNames(fuzzMaxNames))
	f.lds.Set(apiListener("l0", "r0"), apiListener("l1", "r1"))
	f.rds.Set(weightedRoute("r0", "a", []string{"c0"}, []uint32{1}), weightedRoute("r1", "b", []string{"c1", "c2"}, []uint32{1, 1}))
	f.cds.Set(edsCluster("c0"), edsCluster("c1"), edsCluster("c2"))
	f.eds.Set(cla("c0", "10.0.0.1:80"), cla("c1", "10.0.0.2:80"))
	return &fuzzServer{f: f, cc: dial(tb, f.addr)}
}

// answers holds the last response of each type a fuzzed stream received,
// so that operations can ACK and NACK real nonces.
type answers struct {
	mu      sync.Mutex
	version map[string]string
	nonce   map[string]string
}

func (a *answers) set(typeURL, version, nonce string) {
	a.mu.Lock()
	a.version[typeURL], a.nonce[typeURL] = version, nonce
	a.mu.Unlock()
}

func (a *answers) get(typeURL string) (string, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.version[typeURL], a.nonce[typeURL]
}

// asked counts what a fuzzed stream asked for, to bound the state the
// server may keep for it.
type asked struct {
	types map[string]bool
	names map[string]map[string]bool
}

func (a *asked) add(typeURL string, names ...string) {
	a.types[typeURL] = true
	if a.names[typeURL] == nil {
		a.names[typeURL] = map[string]bool{}
	}
	for _, n := range names {
		a.names[typeURL][n] = true
	}
}

// run plays ops over one stream of the given kind, then closes it and waits
// for the server to end it. It returns what was asked and the stream's
// final status from the registry (ok false when the stream never named
// its node).
func (fs *fuzzServer) run(t *testing.T, ops []adsOp, delta bool) (asked, xds.ProxyStatus, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := &fuzzStream{
		node: fmt.Sprintf("fuzz-%d", fs.nextID.Add(1)),
		got:  &answers{version: map[string]string{}, nonce: map[string]string{}},
		a:    asked{types: map[string]bool{}, names: map[string]map[string]bool{}},
		done: make(chan error, 1),
	}
	client := discovery.NewAggregatedDiscoveryServiceClient(fs.cc)
	var send func(op adsOp, first bool) error
	var closeSend func() error
	if delta {
		send, closeSend = openFuzzStream(ctx, t, s, client.DeltaAggregatedResources, s.deltaRequest,
			func(r *discovery.DeltaDiscoveryResponse) (string, string, string) {
				return r.TypeUrl, r.SystemVersionInfo, r.Nonce
			})
	} else {
		send, closeSend = openFuzzStream(ctx, t, s, client.StreamAggregatedResources, s.sotwRequest,
			func(r *discovery.DiscoveryResponse) (string, string, string) {
				return r.TypeUrl, r.VersionInfo, r.Nonce
			})
	}
	for i, op := range ops {
		if err := send(op, i == 0); err != nil {
			// The server ended the stream (an empty type URL does).
			break
		}
	}
	_ = closeSend()
	s.waitEnd(ctx, t, len(ops))
	p, ok := fs.finalStatus(t, s.node)
	return s.a, p, ok
}

// fuzzStream is one fuzzed stream: its node, the last answer per type, and
// what it asked for.
type fuzzStream struct {
	node string
	got  *answers
	a    asked
	// done receives the error that ended the receive loop.
	done chan error
}

// openFuzzStream opens s's stream with open and records the type URL,
// version and nonce (read by answer) of each response until the stream
// ends. It returns how to send the request request builds of an op, and
// how to close the sending side.
func openFuzzStream[Req, Resp any](ctx context.Context, t *testing.T, s *fuzzStream,
	open func(context.Context, ...grpc.CallOption) (grpc.BidiStreamingClient[Req, Resp], error),
	request func(op adsOp, first bool) *Req, answer func(*Resp) (typeURL, version, nonce string)) (send func(op adsOp, first bool) error, closeSend func() error) {
	stream, err := open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			r, err := stream.Recv()
			if err != nil {
				s.done <- err
				return
			}
			s.got.set(answer(r))
		}
	}()
	return func(op adsOp, first bool) error { return stream.Send(request(op, first)) }, stream.CloseSend
}

// deltaRequest builds the delta request op stands for and records what
// it asks for.
func (s *fuzzStream) deltaRequest(op adsOp, first bool) *discovery.DeltaDiscoveryRequest {
	req := &discovery.DeltaDiscoveryRequest{TypeUrl: op.typeURL}
	if first {
		req.Node = &corev3.Node{Id: s.node}
	}
	_, nonce := s.got.get(op.typeURL)
	switch op.kind {
	case 0, 6:
		req.ResourceNamesSubscribe = op.names
		s.a.add(op.typeURL, op.names...)
	case 7:
		req.ResourceNamesUnsubscribe = op.names
		s.a.add(op.typeURL)
	case 1:
		req.ResourceNamesSubscribe = []string{"*"}
		s.a.add(op.typeURL)
	case 2:
		req.ResourceNamesUnsubscribe = []string{"*"}
		s.a.add(op.typeURL)
	case 3:
		req.ResponseNonce = nonce
		s.a.add(op.typeURL)
	case 4:
		req.ResponseNonce = nonce
		req.ErrorDetail = &status.Status{Code: 3, Message: "fuzz rejects"}
		s.a.add(op.typeURL)
	case 5:
		req.ResponseNonce = strconv.Itoa(int(op.arg))
		req.InitialResourceVersions = map[string]string{"c0": "bogus", fmt.Sprintf("iv-%d", op.arg): "1"}
		s.a.add(op.typeURL, "c0", fmt.Sprintf("iv-%d", op.arg))
	}
	return req
}

// sotwRequest builds the state-of-the-world request op stands for and
// records what it asks for.
func (s *fuzzStream) sotwRequest(op adsOp, first bool) *discovery.DiscoveryRequest {
	req := &discovery.DiscoveryRequest{TypeUrl: op.typeURL, ResourceNames: op.names}
	if first {
		req.Node = &corev3.Node{Id: s.node}
	}
	version, nonce := s.got.get(op.typeURL)
	switch op.kind {
	case 1:
		req.ResourceNames = []string{"*"}
	case 3:
		req.VersionInfo, req.ResponseNonce = version, nonce
	case 4:
		req.VersionInfo, req.ResponseNonce = "", nonce
		req.ErrorDetail = &status.Status{Code: 3, Message: "fuzz rejects"}
	case 5:
		req.VersionInfo, req.ResponseNonce = strconv.Itoa(int(op.arg)*7), strconv.Itoa(int(op.arg))
	}
	s.a.add(op.typeURL, req.ResourceNames...)
	return req
}

// waitEnd fails t unless the server ends the stream before ctx does.
func (s *fuzzStream) waitEnd(ctx context.Context, t *testing.T, ops int) {
	select {
	case err := <-s.done:
		if !errors.Is(err, io.EOF) && ctx.Err() != nil {
			t.Fatalf("stream of %d ops did not end: %v", ops, err)
		}
	case <-ctx.Done():
		t.Fatalf("stream of %d ops did not end", ops)
	}
}

// finalStatus is node's status in the registry, which must show it
// disconnected; ok is false when the stream never named its node.
func (fs *fuzzServer) finalStatus(t *testing.T, node string) (xds.ProxyStatus, bool) {
	for _, p := range fs.f.srv.Proxies() {
		if p.NodeID == node {
			if p.Connected {
				// disconnect runs before the handler returns, hence
				// before the client sees the end of the stream.
				t.Errorf("proxy %s still connected after its stream ended", node)
			}
			return p, true
		}
	}
	return xds.ProxyStatus{}, false
}

// FuzzADS plays arbitrary sequences of DiscoveryRequests or
// DeltaDiscoveryRequests over a real loopback ADS stream: unknown and
// empty type URLs, bogus nonces and versions, ACKs and NACKs of real
// responses, huge name lists, wildcard and unsubscribe storms. The server
// must not panic (a panic in a stream handler kills the test binary), must
// end every stream when the client closes it, and must keep per stream no
// more subscription state than the stream asked for: at most one type
// state per type URL sent and at most the distinct names subscribed. The
// names the stream holds never exceed WithMaxSubscribedNames, and a stream
// that never asked for more is not ended by that limit.
func FuzzADS(f *testing.F) {
	f.Add([]byte{0x00, 0x02, 0x03, 0x00}, false)
	f.Add([]byte{0x41, 0x00, 0x23, 0x00, 0x44, 0x00}, true)
	// Huge lists of 1,921 clusters, 1,921 load assignments, then 481
	// listeners: the third request goes over the limit.
	f.Add([]byte{0x46, 40, 0x66, 40, 0x06, 10}, true)
	f.Add([]byte{0x46, 40, 0x66, 40, 0x06, 10}, false)
	fs := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, data []byte, delta bool) {
		ops := decodeOps(data)
		if len(ops) == 0 {
			return
		}
		a, p, ok := fs.run(t, ops, delta)
		if !ok {
			return
		}
		held, asked := 0, 0
		for _, names := range a.names {
			asked += len(names) + 1 // and a wildcard
		}
		for typeURL, ts := range p.Types {
			held += len(ts.Subscribed)
			if ts.Wildcard {
				held++
			}
			if !a.types[typeURL] {
				t.Errorf("state for type %q never asked for", typeURL)
			}
			if len(ts.Subscribed) > len(a.names[typeURL]) {
				t.Errorf("type %q: %d names subscribed, %d asked for", typeURL, len(ts.Subscribed), len(a.names[typeURL]))
			}
			if ts.Nacks > ts.Pushes || ts.Acks > ts.Pushes {
				t.Errorf("type %q: %d acks and %d nacks of %d pushes", typeURL, ts.Acks, ts.Nacks, ts.Pushes)
			}
		}
		if held > fuzzMaxNames {
			t.Errorf("stream holds %d names subscribed, over the limit of %d", held, fuzzMaxNames)
		}
		if exhausted := strings.Contains(p.CloseError, "ResourceExhausted"); exhausted && asked <= fuzzMaxNames {
			t.Errorf("stream asked for at most %d names, under the limit of %d, and was ended: %s", asked, fuzzMaxNames, p.CloseError)
		}
		if len(p.Types) > len(a.types) {
			t.Errorf("%d type states for %d type URLs asked", len(p.Types), len(a.types))
		}
		if p.Pending < 0 {
			t.Errorf("pending %d", p.Pending)
		}
	})
}
