package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestStartupFailureIsOneLine starts the real binary on bad user input
// and expects what docs/operations.md promises: exit code 1 and stderr
// exactly one line, naming the file and the problem, with no Go stack
// frames and none of the progress logged before the failure.
func TestStartupFailureIsOneLine(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: v1\nkind: Service\nmetadata: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "nonexistent.yaml")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"bad file in the folder", []string{"--config-dir", dir}, []string{"meshd: --config-dir: ", bad + ":3", "invalid YAML"}},
		{"missing mesh config", []string{"--mesh-config", missing}, []string{"meshd: --mesh-config: ", missing, "no such file or directory"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(bin, append(tc.args, "--xds-addr", "127.0.0.1:0", "--debug-addr", "127.0.0.1:0")...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("exit: %v, want exit code 1\nstderr:\n%s", err, stderr.String())
			}
			out := stderr.String()
			if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
				t.Fatalf("stderr is %d lines, want exactly one:\n%s", strings.Count(out, "\n"), out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("stderr %q lacks %q", out, w)
				}
			}
			for _, frame := range []string{"goroutine", ".go:", "stacktrace"} {
				if strings.Contains(out, frame) {
					t.Errorf("stderr %q carries a stack (%q)", out, frame)
				}
			}
			if strings.Count(out, missing) > 1 {
				t.Errorf("stderr %q names the file more than once", out)
			}
		})
	}
}
