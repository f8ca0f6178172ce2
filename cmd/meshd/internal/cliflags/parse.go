// Package cliflags parses the command lines of meshd and its agent one
// way: --help prints the usage and the flags in 80 columns, --version
// the build, and a positional argument is an error, as both take flags
// only.
package cliflags

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/pflag"
)

// Width is the column --help wraps at.
const Width = 80

// Parse adds --help (-h) and --version to fs, last, and parses args. On
// --help it writes usage, then fs's flags, to out; on --version, the
// build's version; both return pflag.ErrHelp. A positional argument is
// an error naming the command, fs.Name().
func Parse(fs *pflag.FlagSet, args []string, out io.Writer, usage string) error {
	help := fs.BoolP("help", "h", false, "show this help")
	version := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *help {
		fmt.Fprint(out, usage+Usages(fs, Width))
		return pflag.ErrHelp
	}
	if *version {
		fmt.Fprintln(out, Version())
		return pflag.ErrHelp
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: %s takes flags only (see --help)", fs.Arg(0), fs.Name())
	}
	return nil
}

// Usages lists fs's visible flags as Go's flag package does, each on a
// line of its own with its value's placeholder, and its description
// below, indented and wrapped at width columns.
func Usages(fs *pflag.FlagSet, width int) string {
	var b strings.Builder
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		name, text := flagLine(f)
		b.WriteString(name + "\n" + Wrap(text, "        ", width))
	})
	return b.String()
}

// Wrap fills text's words into lines of at most width columns, each
// starting with indent and ending in a newline; a word longer than a line
// has a line of its own.
func Wrap(text, indent string, width int) string {
	var b strings.Builder
	line := indent
	for _, w := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += w
	}
	b.WriteString(line + "\n")
	return b.String()
}

// flagLine returns how pflag shows f: its names and placeholder, and its
// description with its default.
func flagLine(f *pflag.Flag) (name, text string) {
	one := pflag.NewFlagSet("", pflag.ContinueOnError)
	one.AddFlag(f)
	// One flag's line is its names, three spaces, then the rest.
	line := strings.TrimSpace(one.FlagUsagesWrapped(0))
	name, text, _ = strings.Cut(line, "   ")
	// A boolean flag is a switch: --in-cluster, not --in-cluster[=true|false].
	return "  " + strings.TrimSuffix(name, "[=true|false]"), text
}

// Version is the build's version: the module version, the commit it was
// built from (with "+dirty" for uncommitted changes) and the Go version.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "meshd (no build information)"
	}
	v := "meshd " + bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		v += " (commit " + rev[:min(12, len(rev))] + dirty + ")"
	}
	return v + " " + bi.GoVersion
}
