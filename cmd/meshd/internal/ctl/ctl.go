package ctl

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/pflag"

	"github.com/meshd/meshd/cmd/meshd/internal/cliflags"
)

// usage is a subcommand's usage line and what it does.
type usage struct{ line, summary string }

// usages are the subcommands' usages, apart from commands, which the
// commands' flag parsing reads.
var usages = map[string]usage{
	"status":    {"meshd status [--addr HOST:PORT] [-o text|json]", "a running meshd's sources, sync state and problems"},
	"proxies":   {"meshd proxies [--addr HOST:PORT] [-o text|json]", "the proxies a running meshd serves: state, verdict, and per type versions and NACKs"},
	"explain":   {"meshd explain COLLECTION KEY [--addr HOST:PORT] [-o text|json]", "why the item KEY of COLLECTION is what it is: its input, what it read"},
	"translate": {"meshd translate --config-dir DIR --node ID [-o text|json]", "the xDS resources a folder of manifests yields for a node, serving nothing"},
}

// commands run the subcommands on the arguments after their names.
var commands = map[string]func(args []string, out io.Writer) error{
	"status":    runStatus,
	"proxies":   runProxies,
	"explain":   runExplain,
	"translate": runTranslate,
}

// IsCommand reports whether name is one of the subcommands Run runs.
func IsCommand(name string) bool {
	_, ok := commands[name]
	return ok
}

// Run runs the subcommand args[0] with the rest of args, writing results
// to out and errors, one line each, to errOut. It returns the exit code: 0,
// 1 when the command failed, 2 for a bad command line.
func Run(args []string, out, errOut io.Writer) int {
	if len(args) == 0 || !IsCommand(args[0]) {
		fmt.Fprintf(errOut, "meshd: unknown command; one of: %v\n", slices.Sorted(func(yield func(string) bool) {
			for name := range commands {
				if !yield(name) {
					return
				}
			}
		}))
		return 2
	}
	err := commands[args[0]](args[1:], out)
	var usage usageError
	switch {
	case err == nil, errors.Is(err, pflag.ErrHelp):
		return 0
	case errors.As(err, &usage):
		fmt.Fprintf(errOut, "meshd %s: %v\nusage: %s\n", args[0], err, usages[args[0]].line)
		return 2
	}
	fmt.Fprintf(errOut, "meshd %s: %v\n", args[0], err)
	return 1
}

// usageError is a bad command line.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// common are the flags every command takes.
type common struct {
	addr   string
	output string
}

// parse defines the common flags on a new flag set for command name, lets
// more add its own, and parses args, returning the positional arguments.
// --help writes the usage to out.
func parse(name string, args []string, out io.Writer, c *common, more func(fs *pflag.FlagSet)) ([]string, error) {
	u := usages[name]
	fs := pflag.NewFlagSet("meshd "+name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	if name != "translate" {
		fs.StringVar(&c.addr, "addr", "127.0.0.1:15014", "`HOST:PORT` of meshd's debug server (its --debug-addr)")
	}
	fs.StringVarP(&c.output, "output", "o", "text", "output `FORMAT`: text, for people, or json, for scripts")
	if more != nil {
		more(fs)
	}
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		return nil, usageError{err}
	}
	if *help {
		fmt.Fprintf(out, "%s\nUsage:\n  %s\n\nFlags:\n%s", cliflags.Wrap("meshd "+name+": "+u.summary+".", "", cliflags.Width), u.line, cliflags.Usages(fs, cliflags.Width))
		return nil, pflag.ErrHelp
	}
	if c.output != "text" && c.output != "json" {
		return nil, usageError{fmt.Errorf("-o %q: want text or json", c.output)}
	}
	return fs.Args(), nil
}
