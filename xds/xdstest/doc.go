// Package xdstest holds what tests of an xDS server would each write
// otherwise:
//
//   - a raw ADS client, Stream, over either protocol (NewSotW, NewDelta):
//     the test sends each request, decides what to ACK or NACK, and may
//     leave responses unread (Unread) to stand for a stuck proxy;
//   - a grpc-go xDS client: a bootstrap naming plaintext servers
//     (Bootstrap) and a connection through grpc-go's xDS resolver on it
//     (DialXDS);
//   - a certificate authority, made in memory for one test, that issues
//     server certificates for 127.0.0.1 and client certificates with URI
//     SANs (SPIFFE IDs), and writes them as PEM files for the options and
//     flags that take files.
//
// Stream is generic over the protocol's request and response messages, so
// that SotW and Delta share one receive loop, timeout and ACK bookkeeping:
//
//	s := xdstest.NewSotW(t, cc, &corev3.Node{Id: "p"})
//	s.Send(&discovery.DiscoveryRequest{TypeUrl: xds.ClusterType})
//	s.Ack(s.Recv())
//
// It imports nothing of package xds, so tests inside that package may use
// it too. Package envoysim builds on Stream a client that behaves as
// Envoy does and checks the rules Envoy relies on.
package xdstest
