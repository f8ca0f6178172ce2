package kube

import (
	"testing"

	"github.com/meshd/meshd/internal/leakcheck"
	"github.com/meshd/meshd/sources/kube/kubetest"
)

// apiServer is the API server of the package's integration tests, started
// by the first of them.
var apiServer = kubetest.NewShared(nil)

// needEnv returns the API server, or skips t when it cannot run here.
func needEnv(t *testing.T) *kubetest.Env { return apiServer.Env(t) }

var leakOptions = kubetest.IgnoredGoroutines

func TestMain(m *testing.M) {
	leakcheck.VerifyTestMain(apiServer.Around(m), leakOptions...)
}
