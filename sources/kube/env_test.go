package kube

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/meshd/meshd/sources/kube/kubetest"
)

// The API server shared by the package's integration tests, started once.
var (
	testEnv    *kubetest.Env
	testEnvErr error
)

// withTestEnv wraps the test run: it starts the shared API server around
// the package's tests, when the binaries exist and -short is not given.
type withTestEnv struct{ m *testing.M }

func (w withTestEnv) Run() int {
	flag.Parse() // for testing.Short
	if !testing.Short() {
		testEnv, testEnvErr = kubetest.Start(context.Background())
		if testEnvErr != nil && !errors.Is(testEnvErr, kubetest.ErrNoBinaries) {
			fmt.Fprintf(os.Stderr, "starting kube-apiserver: %v\n", testEnvErr)
		}
	} else {
		testEnvErr = errors.New("-short given")
	}
	code := w.m.Run()
	if testEnv != nil {
		testEnv.Stop()
	}
	return code
}

// needEnv returns the shared API server, skipping the test when the
// binaries are absent and failing it when the server did not start.
func needEnv(t *testing.T) *kubetest.Env {
	t.Helper()
	switch {
	case testEnv != nil:
		return testEnv
	case errors.Is(testEnvErr, kubetest.ErrNoBinaries) || testing.Short():
		t.Skipf("skipping integration test: %v", testEnvErr)
	default:
		t.Fatalf("kube-apiserver did not start: %v", testEnvErr)
	}
	return nil
}
