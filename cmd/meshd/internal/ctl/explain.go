package ctl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"

	"github.com/meshd/meshd/cmd/meshd/internal/debugui"
)

func runExplain(args []string, out io.Writer) error {
	var c common
	pos, err := parse("explain", args, out, &c, nil)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageError{fmt.Errorf("want COLLECTION and KEY, got %d arguments", len(pos))}
	}
	var r debugui.ExplainResult
	if err := getJSON(c.addr, "explain", url.Values{"collection": {pos[0]}, "key": {pos[1]}}, &r); err != nil {
		return err
	}
	if c.output == "json" {
		return writeJSON(out, r)
	}
	for _, e := range r.Results {
		if err := writeExplanation(out, e); err != nil {
			return err
		}
	}
	return nil
}

// writeExplanation writes what produced an item: its input, the reads of
// the transformation that made it, its last error, and its value.
func writeExplanation(out io.Writer, e debugui.Explanation) error {
	fmt.Fprintf(out, "%s %s\n", e.Collection, e.Key)
	if !e.Exists {
		fmt.Fprintln(out, "  no such item now")
	}
	if e.Input != "" {
		fmt.Fprintf(out, "  from input %s of %s\n", e.Input, e.InputFrom)
	}
	for _, r := range e.Reads {
		fmt.Fprintf(out, "  read %s %s\n", r.Collection, r.Filter)
	}
	for _, c := range e.Contenders {
		fmt.Fprintf(out, "  also held by %s\n", c)
	}
	if le := e.LastError; le != nil {
		fmt.Fprintf(out, "  last error (%s): %s\n", le.Time.Format("15:04:05"), le.Error)
	}
	if len(e.Value) > 0 {
		var b bytes.Buffer
		if err := json.Indent(&b, e.Value, "  ", "  "); err != nil {
			return fmt.Errorf("the value of %s: %w", e.Key, err)
		}
		fmt.Fprintf(out, "  value: %s\n", b.String())
	}
	_, err := fmt.Fprintln(out)
	return err
}
