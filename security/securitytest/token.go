package securitytest

import (
	"os"
	"path/filepath"
	"testing"
)

// TokenFile writes token to the file "token" in dir, where an agent's
// TokenFile option reads it, and returns the file's path.
func TokenFile(t testing.TB, dir, token string) string {
	t.Helper()
	path := filepath.Join(dir, "token")
	if err := os.WriteFile(path, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
