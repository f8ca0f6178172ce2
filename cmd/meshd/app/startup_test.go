package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStartupErrors checks that what is wrong at start-up fails New with
// one line naming the flag or file at fault.
func TestStartupErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("bad/broken.yaml", "apiVersion: v1\nkind: Service\nmetadata: [oops\n")
	notPEM := write("notpem.txt", "hello")

	tests := []struct {
		name string
		edit func(*Config)
		want []string // substrings of the error
	}{
		{"missing dir", func(c *Config) { c.ConfigDir = filepath.Join(dir, "nope") }, []string{"--config-dir", "no such file"}},
		{"dir is a file", func(c *Config) { c.ConfigDir = notPEM }, []string{"--config-dir", "not a directory"}},
		{"bad file", func(c *Config) { c.ConfigDir = filepath.Join(dir, "bad") }, []string{"broken.yaml"}},
		{"bad cert", func(c *Config) { c.XDSTLSCert, c.XDSTLSKey = notPEM, notPEM }, []string{"--xds-tls-cert"}},
		{"missing cert", func(c *Config) { c.XDSTLSCert, c.XDSTLSKey = filepath.Join(dir, "x"), filepath.Join(dir, "y") }, []string{"--xds-tls-cert", "no such file"}},
		{"bad flag value", func(c *Config) { c.LogFormat = "xml" }, []string{"--log-format"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.XDSAddr, cfg.DebugAddr = "127.0.0.1:0", "127.0.0.1:0"
			tc.edit(&cfg)
			a, err := New(cfg)
			if err == nil {
				a.Close()
				t.Fatal("New succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q, want it to contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("err %q spans several lines", err)
			}
		})
	}
}
