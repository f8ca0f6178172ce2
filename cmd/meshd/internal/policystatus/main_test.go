package policystatus

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/meshd/meshd/sources/kube/kubetest"
)

// apiServer serves Istio's security CRDs for the package's tests.
var apiServer = kubetest.NewShared(func(ctx context.Context, e *kubetest.Env) error {
	return kubetest.InstallIstioSecurityCRDs(ctx, e.Config)
})

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(apiServer.Around(m), kubetest.IgnoredGoroutines...)
}
