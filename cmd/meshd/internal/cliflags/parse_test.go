package cliflags_test

import (
	"bytes"
	"errors"
	"io"
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
