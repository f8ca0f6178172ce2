package child

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// StartPiped starts cmd with its stderr on this process's and returns its
// stdin and its stdout's lines. The lines channel is closed when stdout
// ends or stop is closed (nil: never), so a parent that stops listening
// does not leave the reader blocked.
func StartPiped(cmd *exec.Cmd, stop <-chan struct{}) (io.WriteCloser, <-chan string, error) {
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, fmt.Errorf("stdin of %s: %w", cmd.Path, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, fmt.Errorf("stdout of %s: %w", cmd.Path, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	lines := make(chan string, 16)
	go readLines(stdout, lines, stop)
	return stdin, lines, nil
}

// readLines sends r's lines to lines until r ends or stop is closed.
func readLines(r io.Reader, lines chan<- string, stop <-chan struct{}) {
	defer close(lines)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		select {
		case lines <- sc.Text():
		case <-stop:
			return
		}
	}
}
