package xds

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

// rewrite makes the script tests write the output they get into their
// files instead of comparing: go test ./xds -run TestProtocol -rewrite.
var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata/*.txt scripts")

// A script (testdata/*.txt) is a sequence of blocks, each:
//
//	# comments and blank lines, kept as they are
//	command arg key=value ...
//	more input lines, if the command takes them
//	----
//	expected output, ending at a blank line
//
// The output never holds a blank line: a command with nothing to say
// prints "ok".

// command is one block's input.
type command struct {
	// pos is "file:line" of the command line.
	pos  string
	name string
	// args are the words without "=", in order; kv the key=value words.
	args []string
	kv   map[string]string
	// input are the lines after the command line.
	input []string
}

// has reports whether the command has the word key, with or without a
// value.
func (c command) has(key string) bool {
	if _, ok := c.kv[key]; ok {
		return true
	}
	for _, a := range c.args {
		if a == key {
			return true
		}
	}
	return false
}

// block is a command with the lines before it and its expected output.
type block struct {
	preamble []string
	lines    []string // the command line and its input
	cmd      command
	want     string
}

// parseScript reads the blocks of a script.
func parseScript(path, text string) ([]block, []string, error) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var blocks []block
	var pre []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			pre = append(pre, l)
			continue
		}
		b := block{preamble: pre}
		pre = nil
		start := i
		for ; i < len(lines) && lines[i] != "----"; i++ {
			b.lines = append(b.lines, lines[i])
		}
		if i == len(lines) {
			return nil, nil, fmt.Errorf("%s:%d: command without ----", path, start+1)
		}
		var out []string
		for i++; i < len(lines) && lines[i] != ""; i++ {
			out = append(out, lines[i])
		}
		b.want = strings.Join(out, "\n")
		b.cmd = parseCommand(fmt.Sprintf("%s:%d", path, start+1), b.lines)
		blocks = append(blocks, b)
		if i < len(lines) {
			i-- // the blank line is the next block's preamble
		}
	}
	return blocks, pre, nil
}

func parseCommand(pos string, lines []string) command {
	words := strings.Fields(lines[0])
	c := command{pos: pos, name: words[0], kv: map[string]string{}, input: lines[1:]}
	for _, w := range words[1:] {
		if k, v, ok := strings.Cut(w, "="); ok {
			c.kv[k] = v
		} else {
			c.args = append(c.args, w)
		}
	}
	return c
}

// runScript runs each block of the script at path through run and
// compares its output with the block's, or, with -rewrite, writes the
// output into the file.
func runScript(t *testing.T, path string, run func(command) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blocks, tail, err := parseScript(path, string(data))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, b := range blocks {
		got := strings.TrimRight(run(b.cmd), "\n")
		if got == "" {
			got = "ok"
		}
		if !*rewrite && got != b.want {
			t.Errorf("%s: %s\ngot:\n%s\nwant:\n%s", b.cmd.pos, b.lines[0], got, b.want)
		}
		for _, l := range append(append(b.preamble, b.lines...), "----", got) {
			out.WriteString(l + "\n")
		}
	}
	for _, l := range tail {
		out.WriteString(l + "\n")
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
