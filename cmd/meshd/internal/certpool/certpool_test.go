package certpool_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshd/meshd/cmd/meshd/internal/certpool"
	"github.com/meshd/meshd/xds/xdstest"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	ca := xdstest.NewCA(t).WriteCA(t, dir)
	pool, err := certpool.Read("--root-cert", ca)
	if err != nil || pool == nil {
		t.Fatalf("Read of a CA bundle: %v, %v", pool, err)
	}

	empty := filepath.Join(dir, "empty.pem")
	if err := os.WriteFile(empty, []byte("not a certificate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{filepath.Join(dir, "missing.pem"), "--root-cert: open "},
		{empty, "--root-cert " + empty + ": no PEM certificate found"},
	} {
		if _, err := certpool.Read("--root-cert", tc.file); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Read(%s) = %v, want an error starting %q", tc.file, err, tc.want)
		}
	}
}
