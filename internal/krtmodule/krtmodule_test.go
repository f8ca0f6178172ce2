package krtmodule

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const krtModule = "github.com/meshd/meshd/krt"

// goCmd returns a go command run in dir that never reaches the network
// nor this repository's go.work, so it sees only what dir's go.mod says.
func goCmd(t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command on PATH: %v", err)
	}
	cmd := exec.Command(gobin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off", "GOTOOLCHAIN=local")
	return cmd
}

func output(t *testing.T, cmd *exec.Cmd) []string {
	t.Helper()
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// krtDir returns the absolute path of this repository's krt module.
func krtDir(t *testing.T) string {
	dir, err := filepath.Abs(filepath.Join("..", "..", "krt"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("krt is not a module: %v", err)
	}
	return dir
}

// TestEmbedderNeedsOnlyKrt builds the module graph of a throwaway program
// that imports krt, and finds exactly the program and krt in it.
func TestEmbedderNeedsOnlyKrt(t *testing.T) {
	dir := t.TempDir()
	goMod := "module example.com/embedder\n\ngo 1.26\n\nrequire " + krtModule + " v0.1.0\n\n" +
		"replace " + krtModule + " => " + krtDir(t) + "\n"
	main := "package main\n\nimport \"" + krtModule + "\"\n\nfunc main() { _ = krt.NewGraph() }\n"
	for name, content := range map[string]string{"go.mod": goMod, "main.go": main} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := output(t, goCmd(t, dir, "list", "-m", "-f", "{{.Path}}", "all"))
	if want := []string{"example.com/embedder", krtModule}; !slices.Equal(got, want) {
		t.Fatalf("go list -m all = %q, want %q", got, want)
	}
	// And the program builds with nothing downloaded.
	output(t, goCmd(t, dir, "build", "-o", os.DevNull, "."))
}

// TestKrtImportsOnlyTheStandardLibrary lists every package krt and its
// tests import, directly or not: all but krt's own are the standard
// library's.
func TestKrtImportsOnlyTheStandardLibrary(t *testing.T) {
	lines := output(t, goCmd(t, krtDir(t), "list", "-deps", "-test",
		"-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./..."))
	own := []string{krtModule, krtModule + "_test", krtModule + ".test"}
	var pkgs []string
	for _, line := range lines {
		// A package built for a test reads "path [path.test]".
		p, _, _ := strings.Cut(line, " ")
		if p == "" || slices.Contains(pkgs, p) {
			continue
		}
		pkgs = append(pkgs, p)
		if !slices.Contains(own, p) && !strings.HasPrefix(p, krtModule+"/") { // krt/krttest and the like
			t.Errorf("krt depends on %s, which is not the standard library", p)
		}
	}
	if !slices.Contains(pkgs, krtModule) {
		t.Fatalf("go list found no krt package in %q", lines)
	}
}
