package xdsclients

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The grpc-js client: its script and the npm packages it needs, pinned
// by the lockfile.
var (
	//go:embed grpcjs/client.js
	grpcJSScript []byte
	//go:embed grpcjs/package.json
	grpcJSPackage []byte
	//go:embed grpcjs/package-lock.json
	grpcJSLock []byte
)

var grpcJS = Implementation{
	Name:    "grpc-js",
	Version: grpcJSVersions,
	Install: func() error { _, err := grpcJSInstall(); return err },
	Start:   func(t testing.TB, bootstrap []byte) Client { t.Helper(); return startGRPCJS(t, bootstrap) },
	Serve: func(t testing.TB, bootstrap []byte, addr string) {
		t.Helper()
		waitStarted(t, startGRPCJS(t, bootstrap, "serve", addr))
	},
}

// startGRPCJS runs the grpc-js script with args, installing its packages
// first, or skips t when they cannot be.
func startGRPCJS(t testing.TB, bootstrap []byte, args ...string) *process {
	t.Helper()
	dir, err := grpcJSInstall()
	if err != nil {
		t.Skipf("grpc-js xDS client unavailable: %v", err)
	}
	script := filepath.Join(t.TempDir(), "client.js")
	if err := os.WriteFile(script, grpcJSScript, 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"NODE_PATH=" + filepath.Join(dir, "node_modules"), grpcJSRBAC}
	return startProcess(t, "grpc-js", bootstrap, env, append([]string{"node", script}, args...)...)
}

// grpcJSRBAC turns on the RBAC HTTP filter of @grpc/grpc-js-xds, which
// 1.14 registers only with this variable set: without it a server NACKs
// every listener carrying meshd's RBAC filters ("envoy.filters.http.
// rbac.deny filter validation failed"), since an unknown filter that is
// not optional fails validation. docs/clients.md tells operators the same.
const grpcJSRBAC = "GRPC_XDS_EXPERIMENTAL_RBAC=true"

// grpcJSVersions names the pinned versions of both packages.
func grpcJSVersions() string {
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(grpcJSPackage, &pkg); err != nil {
		return "unknown: " + err.Error()
	}
	return fmt.Sprintf("@grpc/grpc-js %s, @grpc/grpc-js-xds %s",
		pkg.Dependencies["@grpc/grpc-js"], pkg.Dependencies["@grpc/grpc-js-xds"])
}

// grpcJSInstall installs the grpc-js packages once per process and
// returns their directory.
var grpcJSInstall = sync.OnceValues(func() (string, error) { return installNPM(grpcJSPackage, grpcJSLock) })

// installNPM installs the packages of a package.json and its lockfile
// with `npm ci` into a directory of the user cache named by their hash,
// unless it is there already, and returns that directory. It installs
// into a sibling first and renames it into place, so a failed or
// concurrent install never leaves a partial directory under the name.
func installNPM(pkg, lock []byte) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory: %w", err)
	}
	sum := sha256.Sum256(append(append([]byte{}, pkg...), lock...))
	dir := filepath.Join(cache, "meshd-xds-clients", "npm-"+hex.EncodeToString(sum[:6]))
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err == nil {
		return dir, nil
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", fmt.Errorf("%s is not installed: %w", tool, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("npm cache: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "installing-")
	if err != nil {
		return "", fmt.Errorf("npm cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	for name, data := range map[string][]byte{"package.json": pkg, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			return "", fmt.Errorf("npm cache: %w", err)
		}
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm ci: %w\n%s", err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, "node_modules")); statErr == nil {
			return dir, nil // installed meanwhile by another process
		}
		return "", fmt.Errorf("npm cache: %w", err)
	}
	return dir, nil
}
