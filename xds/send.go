package xds

import (
	"fmt"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// sendSotW sends u as a DiscoveryResponse.
func sendSotW(stream discovery.AggregatedDiscoveryService_StreamAggregatedResourcesServer, u update) (int, error) {
	resp := &discovery.DiscoveryResponse{
		VersionInfo: u.version,
		TypeUrl:     u.typeURL,
		Nonce:       u.nonce,
		Resources:   make([]*anypb.Any, len(u.resources)),
	}
	for i, r := range u.resources {
		resp.Resources[i] = r.any
	}
	return sendResponse(stream.Send, resp, u)
}

// sendDelta sends u as a DeltaDiscoveryResponse.
func sendDelta(stream discovery.AggregatedDiscoveryService_DeltaAggregatedResourcesServer, u update) (int, error) {
	resp := &discovery.DeltaDiscoveryResponse{
		SystemVersionInfo: u.version,
		TypeUrl:           u.typeURL,
		Nonce:             u.nonce,
		Resources:         make([]*discovery.Resource, len(u.resources)),
		RemovedResources:  u.removed,
	}
	for i, r := range u.resources {
		resp.Resources[i] = r.deltaResource()
	}
	return sendResponse(stream.Send, resp, u)
}

// sendResponse sends resp, the response of u in either protocol, and
// returns the size of u's resources.
func sendResponse[Resp any](send func(Resp) error, resp Resp, u update) (int, error) {
	if err := send(resp); err != nil {
		return 0, fmt.Errorf("xds: send %s: %w", shortType(u.typeURL), err)
	}
	bytes := 0
	for _, r := range u.resources {
		bytes += r.size()
	}
	return bytes, nil
}
