package app

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/meshd/meshd/internal/leakcheck"
	"github.com/meshd/meshd/sources/kube/kubetest"
)

// A bootstrap with "tls" channel credentials (gRFC A65) handed to
// grpc-go's testing resolver (NewXDSResolverWithConfigForTesting, in
// TestAgentBootstrappedClient) leaves one pemfile watcher goroutine of
// grpc-go's running after every client and connection is closed; it is
// grpc-go's to stop, not meshd's.
func TestMain(m *testing.M) {
	leakcheck.VerifyTestMain(kubetest.ReportSkips(m),
		goleak.IgnoreTopFunction("google.golang.org/grpc/credentials/tls/certprovider/pemfile.(*watcher).run"))
}
