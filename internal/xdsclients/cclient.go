package xdsclients

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// python is Debian's interpreter, the one python3-grpcio installs for:
// not whatever python3 comes first on PATH.
const python = "/usr/bin/python3"

//go:embed cclient.py
var cCoreScript []byte

var cCore = Implementation{
	Name: "c-core",
	Version: func() string {
		v, err := cCoreInstall()
		if err != nil {
			return "unavailable: " + err.Error()
		}
		return "grpcio " + v
	},
	Install: func() error { _, err := cCoreInstall(); return err },
	Start:   func(t testing.TB, bootstrap []byte) Client { t.Helper(); return startCCore(t, bootstrap) },
	Serve: func(t testing.TB, bootstrap []byte, addr string) {
		t.Helper()
		waitStarted(t, startCCore(t, bootstrap, "serve", addr))
	},
}

// startCCore runs the C-core script with args, installing python3-grpcio
// first, or skips t when it cannot be.
func startCCore(t testing.TB, bootstrap []byte, args ...string) *process {
	t.Helper()
	if _, err := cCoreInstall(); err != nil {
		t.Skipf("gRPC C-core (python3-grpcio) unavailable: %v", err)
	}
	script := filepath.Join(t.TempDir(), "cclient.py")
	if err := os.WriteFile(script, cCoreScript, 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"GRPC_VERBOSITY=ERROR", "PYTHONUNBUFFERED=1"}
	return startProcess(t, "c-core", bootstrap, env, append([]string{python, script}, args...)...)
}

var cCoreInstall = sync.OnceValues(installPythonGRPC)

// installPythonGRPC returns the version of grpcio that /usr/bin/python3
// imports, first installing Debian's python3-grpcio with apt-get when it
// is missing and this process may (it runs as root).
func installPythonGRPC() (string, error) {
	if v, err := pythonGRPCVersion(); err == nil {
		return v, nil
	}
	if _, err := os.Stat(python); err != nil {
		return "", fmt.Errorf("%s: %w", python, err)
	}
	if os.Geteuid() != 0 {
		return "", errors.New("python3-grpcio is not installed, and installing it needs root: apt-get install python3-grpcio")
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return "", fmt.Errorf("python3-grpcio is not installed and there is no apt-get: %w", err)
	}
	install := func() ([]byte, error) {
		// Another test binary may hold the dpkg lock: wait for it.
		cmd := exec.Command("apt-get", "-o", "DPkg::Lock::Timeout=300", "install", "-y", "--no-install-recommends", "python3-grpcio")
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		return cmd.CombinedOutput()
	}
	if _, err := install(); err != nil {
		// The package lists may be missing or stale.
		if out, err := exec.Command("apt-get", "-o", "DPkg::Lock::Timeout=300", "update").CombinedOutput(); err != nil {
			return "", fmt.Errorf("apt-get update: %w\n%s", err, out)
		}
		if out, err := install(); err != nil {
			return "", fmt.Errorf("apt-get install python3-grpcio: %w\n%s", err, out)
		}
	}
	return pythonGRPCVersion()
}

// pythonGRPCVersion returns grpc.__version__ as /usr/bin/python3 sees it.
func pythonGRPCVersion() (string, error) {
	out, err := exec.Command(python, "-c", "import grpc; print(grpc.__version__)").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s cannot import grpc: %w\n%s", python, err, out)
	}
	return strings.TrimSpace(string(out)), nil
}
