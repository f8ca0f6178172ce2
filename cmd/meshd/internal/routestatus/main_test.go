package routestatus

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/meshd/meshd/sources/kube/kubetest"
)

// leakOptions ignore the idle keep-alive connections of client-go's
// process-wide transport cache, which outlive any one client by design.
var leakOptions = []goleak.Option{
	goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
	goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
	goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
	goleak.IgnoreAnyFunction("net/http.(*http2ClientConn).readLoop"),
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(withTestEnv{m}, leakOptions...)
}

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
		if testEnvErr == nil {
			if testEnvErr = kubetest.InstallGatewayCRDs(context.Background(), testEnv.Config); testEnvErr != nil {
				fmt.Fprintf(os.Stderr, "installing the Gateway API CRDs: %v\n", testEnvErr)
			}
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
func needEnv(t testing.TB) *kubetest.Env {
	t.Helper()
	switch {
	case testEnvErr == nil && testEnv != nil:
		return testEnv
	case errors.Is(testEnvErr, kubetest.ErrNoBinaries) || testing.Short():
		t.Skipf("skipping integration test: %v", testEnvErr)
	default:
		t.Fatalf("kube-apiserver did not start: %v", testEnvErr)
	}
	return nil
}
