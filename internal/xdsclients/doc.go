// Package xdsclients gives meshd's tests three independent xDS client
// implementations to run against a real meshd, behind one interface:
//
//   - grpc-go, in process (the module's own grpc version);
//   - @grpc/grpc-js with @grpc/grpc-js-xds, on Node.js, installed with
//     npm from the pinned lockfile in grpcjs/ into the user cache
//     directory on first use;
//   - gRPC C-core, through the grpcio Python package Debian ships
//     (python3-grpcio, run with /usr/bin/python3), installed with apt-get
//     when the test runs as root and it is missing.
//
// Each Implementation starts clients for one bootstrap (Bootstrap makes
// one: a server address and a node id). A Client makes unary calls with an
// empty request through an xds:/// target and reports, per call, the
// backend that answered or the status code; StartBackends serves such
// calls on loopback addresses, each backend answering with its address.
// The two out-of-process clients are small scripts (grpcjs/client.js,
// cclient.py) reading one JSON command per line on stdin and answering
// one JSON line on stdout.
//
// Start skips the test, with the reason, only when the implementation
// cannot be installed on this machine (no node or npm, no registry, not
// root and no python3-grpcio). Install does the installs up front, as
// .ci/run does through cmd/xdsclients-install.
package xdsclients
