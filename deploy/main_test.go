package deploy_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/meshd/meshd/deploy"
	"github.com/meshd/meshd/internal/leakcheck"
	"github.com/meshd/meshd/sources/kube/kubetest"
)

// apiServer is the API server of the package's tests, authorizing with
// RBAC as a cluster does, started by the first of them.
var apiServer = kubetest.NewShared(nil, kubetest.WithAuthorization("RBAC"))

func TestMain(m *testing.M) {
	leakcheck.VerifyTestMain(apiServer.Around(m), kubetest.IgnoredGoroutines...)
}

// needEnv returns the API server, or skips t when it cannot run here.
func needEnv(t *testing.T) *kubetest.Env { return apiServer.Env(t) }

var (
	deployOnce sync.Once
	deployErr  error
)

// deployed returns the shared API server once it serves the Gateway API
// routes and every manifest is applied.
func deployed(t *testing.T) *kubetest.Env {
	t.Helper()
	env := needEnv(t)
	deployOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if deployErr = kubetest.InstallGatewayCRDs(ctx, env.Config); deployErr == nil {
			deployErr = deploy.Apply(ctx, env.Config)
		}
	})
	if deployErr != nil {
		t.Fatal(deployErr)
	}
	return env
}
