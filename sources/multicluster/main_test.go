package multicluster

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/meshd/meshd/sources/kube/kubetest"
)

// west is the remote cluster's API server, shared by the package's tests.
var west = kubetest.NewShared(nil)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(west.Around(m), kubetest.IgnoredGoroutines...)
}
