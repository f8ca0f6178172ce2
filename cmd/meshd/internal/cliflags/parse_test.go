package cliflags_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/meshd/meshd/cmd/meshd/internal/cliflags"
)

func flagSet(addr *string) *pflag.FlagSet {
	fs := pflag.NewFlagSet("meshd test", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.StringVar(addr, "addr", "127.0.0.1:1", "`host:port` to listen on")
	return fs
}

func TestParse(t *testing.T) {
	var addr string
	var out bytes.Buffer
	if err := cliflags.Parse(flagSet(&addr), []string{"--addr", "127.0.0.1:2"}, &out, "usage\n"); err != nil || addr != "127.0.0.1:2" || out.Len() != 0 {
		t.Errorf("flags: err %v, addr %q, output %q", err, addr, out.String())
	}

	err := cliflags.Parse(flagSet(&addr), []string{"-h"}, &out, "Usage: meshd test [flags]\n")
	if !errors.Is(err, pflag.ErrHelp) {
		t.Errorf("-h: err = %v, want pflag.ErrHelp", err)
	}
	help := out.String()
	if !strings.HasPrefix(help, "Usage: meshd test [flags]\n") || !strings.Contains(help, "--addr host:port") ||
		strings.Index(help, "--addr") > strings.Index(help, "--help") {
		t.Errorf("help = %q: want the usage, then --addr, then --help", help)
	}

	err = cliflags.Parse(flagSet(&addr), []string{"--addr", "x", "serve"}, io.Discard, "")
	if err == nil || err.Error() != `unexpected argument "serve": meshd test takes flags only (see --help)` {
		t.Errorf("a positional argument: err = %v", err)
	}
	if err := cliflags.Parse(flagSet(&addr), []string{"--bogus"}, io.Discard, ""); err == nil || !strings.Contains(err.Error(), "--bogus") {
		t.Errorf("an unknown flag: err = %v", err)
	}
}

// TestHelpFitsEightyColumns: every help line fits in 80 columns, each
// flag shows its placeholder, and a long description wraps under it.
func TestHelpFitsEightyColumns(t *testing.T) {
	var addr, dir string
	fs := flagSet(&addr)
	fs.StringVar(&dir, "config-directory-of-the-mesh", "", "read Kubernetes YAML (Services, Pods, EndpointSlices, HTTPRoutes and more) from `DIR`, recursively, and watch it for changes")
	var out bytes.Buffer
	if err := cliflags.Parse(fs, []string{"--help"}, &out, "Usage: meshd test [flags]\n"); !errors.Is(err, pflag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	for _, l := range lines {
		if len(l) > cliflags.Width {
			t.Errorf("%d columns: %q", len(l), l)
		}
	}
	want := []string{
		"  --addr host:port",
		`        host:port to listen on (default "127.0.0.1:1")`,
		"  --config-directory-of-the-mesh DIR",
		"        read Kubernetes YAML (Services, Pods, EndpointSlices, HTTPRoutes and",
		"        more) from DIR, recursively, and watch it for changes",
		"  -h, --help",
		"  --version",
	}
	for _, w := range want {
		if !slices.Contains(lines, w) {
			t.Errorf("help lacks the line %q:\n%s", w, out.String())
		}
	}
}

// TestVersion: --version prints the build and exits as --help does.
func TestVersion(t *testing.T) {
	var addr string
	var out bytes.Buffer
	if err := cliflags.Parse(flagSet(&addr), []string{"--version"}, &out, "usage\n"); !errors.Is(err, pflag.ErrHelp) {
		t.Fatalf("--version: %v", err)
	}
	if got := out.String(); got != cliflags.Version()+"\n" || !strings.HasPrefix(got, "meshd ") || !strings.Contains(got, "go1.") {
		t.Errorf("--version printed %q", got)
	}
}
