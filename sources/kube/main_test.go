package kube

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/meshd/meshd/sources/kube/kubetest"
)

// apiServer is the API server of the package's integration tests, started
// by the first of them.
var apiServer = kubetest.NewShared(nil)

// needEnv returns the API server, or skips t when it cannot run here.
func needEnv(t *testing.T) *kubetest.Env { return apiServer.Env(t) }

var leakOptions = kubetest.IgnoredGoroutines

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(apiServer.Around(m), leakOptions...)
}
