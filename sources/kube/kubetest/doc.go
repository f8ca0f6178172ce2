// Package kubetest runs a real etcd and kube-apiserver on loopback for
// integration tests.
//
// The binaries live in a cache directory (BinDir). On first use, Need
// builds them there with the repository's .ci/kube-testenv.sh: a cold
// build takes about seven minutes on two idle cores and is never repeated
// while the cache lasts. One build runs at a time, however many test
// packages need it: the others wait on a file lock in the cache
// directory. Progress goes to stderr and, since go test hides the output
// of passing packages unless -v is given, to the terminal too. A build
// that cannot finish before the package's go test -timeout is stopped in
// time and fails the test with what to do; a rerun resumes it from Go's
// build cache. With -short, tests that need the API server skip, and
// ReportSkips (which Shared.Around includes) prints one line per package
// naming how many were skipped and why.
//
// A test package starts one Env, shares it (Shared), and stops it at the
// end; tests use unique namespace names, since no controller-manager runs
// to finish deleting namespaces.
//
// By default every request is allowed. WithAuthorization("RBAC") makes the
// API server authorize as a cluster does, so a test can check what a
// service account's roles permit: Config stays a cluster admin (its token
// is in system:masters), and ConfigAs and KubeconfigAs act as another user
// through impersonation. InstallGatewayCRDs serves the Gateway API routes
// with their real schemas.
package kubetest
