package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestCreateRemoteSecretCommandLine checks the command's refusals: one
// line naming the problem, no stack, and the exit code.
func TestCreateRemoteSecretCommandLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no flags", nil, 2, "--name and --kubeconfig are required"},
		{"missing kubeconfig", []string{"--name", "west", "--kubeconfig", filepath.Join(t.TempDir(), "none")}, 1, "--kubeconfig"},
		{"unknown flag", []string{"--nope"}, 2, "unknown flag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := runCreateRemoteSecret(tc.args, &out, &errOut); code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, errOut.String())
			}
			if !strings.Contains(errOut.String(), tc.want) || strings.Contains(errOut.String(), "goroutine") {
				t.Errorf("stderr %q, want %q", errOut.String(), tc.want)
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q, want nothing", out.String())
			}
		})
	}
}
