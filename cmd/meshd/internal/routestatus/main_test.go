package routestatus

import (
	"context"
	"testing"

	"github.com/meshd/meshd/internal/leakcheck"
	"github.com/meshd/meshd/sources/kube/kubetest"
)

// apiServer is the API server of the package's integration tests, with the
// Gateway API's own route CRDs, started by the first of them.
var apiServer = kubetest.NewShared(func(ctx context.Context, e *kubetest.Env) error {
	return kubetest.InstallGatewayCRDs(ctx, e.Config)
})

// needEnv returns the API server, or skips t when it cannot run here.
func needEnv(t testing.TB) *kubetest.Env { return apiServer.Env(t) }

var leakOptions = kubetest.IgnoredGoroutines

func TestMain(m *testing.M) {
	leakcheck.VerifyTestMain(apiServer.Around(m), leakOptions...)
}
