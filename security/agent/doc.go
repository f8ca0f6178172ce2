// Package agent is the library of `meshd agent`: it runs beside a
// proxyless gRPC application, obtains the workload's certificate from
// meshd's CA with the workload's token, and keeps it in a directory that
// the application's gRPC xDS bootstrap points at.
//
// Files written into the output directory, each atomically (a temporary
// file renamed over the old one):
//
//	root-cert.pem   the trust bundle (written first)
//	key.pem         the private key, mode 0600
//	cert-chain.pem  the certificate, then its intermediates
//	bootstrap.json  the gRPC xDS bootstrap (GRPC_XDS_BOOTSTRAP)
//
// The bootstrap names meshd as the xDS server, the node's id and
// metadata (NAMESPACE, SERVICE_ACCOUNT), a certificate provider
// instance "default" of the file_watcher plugin over the three PEM files,
// and the server listener name template, so that a program using
// google.golang.org/grpc/credentials/xds and xds.NewGRPCServer needs
// nothing else.
//
// Run renews the certificate at half its life, or at a quarter when the
// last renewal brought a new bundle (a root rotation is under way, and the
// new root will soon sign), and retries a failed renewal with backoff
// while the old certificate is still valid. Each renewal makes a new key.
package agent
