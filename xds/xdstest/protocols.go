package xdstest

import (
	"context"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
)

// protocol is what differs between SotW and Delta for a Stream: how to
// open one, and how its requests carry a node, an ACK and a NACK.
type protocol[Req, Resp any] struct {
	open func(context.Context, discovery.AggregatedDiscoveryServiceClient) (grpc.BidiStreamingClient[Req, Resp], error)
	// typeURL and version read a response.
	typeURL, version func(*Resp) string
	setNode          func(*Req, *corev3.Node)
	// answer builds the ACK (detail nil) or NACK of r; accepted is the
	// version last ACKed of r's type, names the subscription to repeat.
	answer func(r *Resp, accepted string, names []string, detail *status.Status) *Req
}

var sotwProtocol = protocol[discovery.DiscoveryRequest, discovery.DiscoveryResponse]{
	open: func(ctx context.Context, c discovery.AggregatedDiscoveryServiceClient) (grpc.BidiStreamingClient[discovery.DiscoveryRequest, discovery.DiscoveryResponse], error) {
		return c.StreamAggregatedResources(ctx)
	},
	typeURL: (*discovery.DiscoveryResponse).GetTypeUrl,
	version: (*discovery.DiscoveryResponse).GetVersionInfo,
	setNode: func(r *discovery.DiscoveryRequest, n *corev3.Node) { r.Node = n },
	answer: func(r *discovery.DiscoveryResponse, accepted string, names []string, detail *status.Status) *discovery.DiscoveryRequest {
		version := r.GetVersionInfo()
		if detail != nil {
			version = accepted // as Envoy does: the version it still holds
		}
		return &discovery.DiscoveryRequest{TypeUrl: r.GetTypeUrl(), VersionInfo: version, ResponseNonce: r.GetNonce(),
			ResourceNames: names, ErrorDetail: detail}
	},
}

var deltaProtocol = protocol[discovery.DeltaDiscoveryRequest, discovery.DeltaDiscoveryResponse]{
	open: func(ctx context.Context, c discovery.AggregatedDiscoveryServiceClient) (grpc.BidiStreamingClient[discovery.DeltaDiscoveryRequest, discovery.DeltaDiscoveryResponse], error) {
		return c.DeltaAggregatedResources(ctx)
	},
	typeURL: (*discovery.DeltaDiscoveryResponse).GetTypeUrl,
	version: (*discovery.DeltaDiscoveryResponse).GetSystemVersionInfo,
	setNode: func(r *discovery.DeltaDiscoveryRequest, n *corev3.Node) { r.Node = n },
	answer: func(r *discovery.DeltaDiscoveryResponse, _ string, names []string, detail *status.Status) *discovery.DeltaDiscoveryRequest {
		// A Delta answer carries no version, and changes no subscription
		// unless it names some.
		return &discovery.DeltaDiscoveryRequest{TypeUrl: r.GetTypeUrl(), ResponseNonce: r.GetNonce(),
			ResourceNamesSubscribe: names, ErrorDetail: detail}
	},
}

// Ack accepts r. A SotW ACK carries names as its subscription (as SotW
// clients repeat theirs); a Delta ACK subscribes to names, if any, too.
func (s *Stream[Req, Resp]) Ack(r *Resp, names ...string) {
	s.t.Helper()
	s.accepted[s.proto.typeURL(r)] = s.proto.version(r)
	s.Send(s.proto.answer(r, "", names, nil))
}

// Nack rejects r with reason, as Envoy does: a SotW NACK names the
// version last ACKed of r's type, and names as its subscription.
func (s *Stream[Req, Resp]) Nack(r *Resp, reason string, names ...string) {
	s.t.Helper()
	s.Send(s.proto.answer(r, s.accepted[s.proto.typeURL(r)], names, &status.Status{Code: 3, Message: reason}))
}
