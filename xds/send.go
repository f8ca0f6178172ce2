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
	bytes := 0
	for i, r := range u.resources {
		resp.Resources[i] = r.any
		bytes += r.size()
	}
	if err := stream.Send(resp); err != nil {
		return 0, fmt.Errorf("xds: send %s: %w", shortType(u.typeURL), err)
	}
	return bytes, nil
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
	bytes := 0
	for i, r := range u.resources {
		resp.Resources[i] = r.delta
		bytes += r.size()
	}
	if err := stream.Send(resp); err != nil {
		return 0, fmt.Errorf("xds: send %s: %w", shortType(u.typeURL), err)
	}
	return bytes, nil
}
