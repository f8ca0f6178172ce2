// Package cliflags parses the command lines of meshd and its agent one
// way: --help prints the usage and the flags, and a positional argument
// is an error, as both take flags only.
package cliflags

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"
)

// Parse adds --help (-h) to fs, last, and parses args. On --help it
// writes usage, then fs's flags wrapped at 100 columns, to out and
// returns pflag.ErrHelp. A positional argument is an error naming the
// command, fs.Name().
func Parse(fs *pflag.FlagSet, args []string, out io.Writer, usage string) error {
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *help {
		fmt.Fprint(out, usage+fs.FlagUsagesWrapped(100))
		return pflag.ErrHelp
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: %s takes flags only (see --help)", fs.Arg(0), fs.Name())
	}
	return nil
}
