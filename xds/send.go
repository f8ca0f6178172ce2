package xds

import (
	"fmt"

	"google.golang.org/grpc"
)

// sendResponse sends u on stream as a response of kind (a DiscoveryResponse
// or a DeltaDiscoveryResponse), which the server's codec encodes
// (outgoing), and returns the bytes of the resources it carried.
func sendResponse(stream grpc.ServerStream, kind StreamKind, u update) (int, error) {
	if err := stream.SendMsg(&outgoing{kind: kind, u: &u}); err != nil {
		return 0, fmt.Errorf("xds: send %s: %w", shortType(u.typeURL), err)
	}
	bytes := 0
	for _, r := range u.resources {
		bytes += r.size()
	}
	return bytes, nil
}
