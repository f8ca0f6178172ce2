package krtmodule

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKrtSuite runs krt's own tests as krt's module sees them. A package
// pattern matches only packages of the module it names, so `go test ./...`
// at the repository root would skip krt; this test keeps that one command
// the whole suite. -race and -short carry over to the krt run.
func TestKrtSuite(t *testing.T) {
	dir := krtDir(t)
	readSources(t, dir)
	args := []string{"test"}
	if raceEnabled {
		args = append(args, "-race")
	}
	if testing.Short() {
		args = append(args, "-short")
	}
	args = append(args, "./...")
	cmd := goCmd(t, dir, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s in krt: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("krt:\n%s", out)
}

// readSources reads every file of the krt module. go test caches a
// passing result until a file the test opened changes, so reading them
// here is what makes an edit to krt, tests included, rerun the suite.
func readSources(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		_, err = os.ReadFile(path)
		return err
	})
	if err != nil {
		t.Fatalf("reading krt's files: %v", err)
	}
}
