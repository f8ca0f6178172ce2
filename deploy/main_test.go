package deploy_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/meshd/meshd/deploy"
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

// The API server shared by the package's tests, started once, authorizing
// with RBAC as a cluster does.
var (
	testEnv    *kubetest.Env
	testEnvErr error
)

type withTestEnv struct{ m *testing.M }

func (w withTestEnv) Run() int {
	flag.Parse() // for testing.Short
	if !testing.Short() {
		testEnv, testEnvErr = kubetest.Start(context.Background(), kubetest.WithAuthorization("RBAC"))
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
