package policystatus

import (
	"context"
	"testing"

	"github.com/meshd/meshd/internal/leakcheck"
	"github.com/meshd/meshd/sources/kube/kubetest"
)

// apiServer serves Istio's security CRDs for the package's tests.
var apiServer = kubetest.NewShared(func(ctx context.Context, e *kubetest.Env) error {
	return kubetest.InstallIstioSecurityCRDs(ctx, e.Config)
})

func TestMain(m *testing.M) {
	leakcheck.VerifyTestMain(apiServer.Around(m), kubetest.IgnoredGoroutines...)
}
