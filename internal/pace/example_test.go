package pace_test

import (
	"fmt"
	"time"

	"github.com/meshd/meshd/internal/pace"
)

// Example shows the select loop: the first change goes out at once, the
// next two, coming within the window, in one round after it.
func Example() {
	changes := make(chan string, 3)
	changes <- "a"
	t := pace.NewTimer(pace.Policy{Window: 50 * time.Millisecond, MaxWindow: time.Second})
	defer t.Stop()
	var batch []string
	for rounds := 0; rounds < 2; {
		select {
		case c := <-changes:
			batch = append(batch, c)
			t.Change()
		case <-t.C():
			fmt.Println("round:", batch)
			batch = nil
			t.Ran(pace.Round{Changes: len(batch), Woken: 1})
			if rounds++; rounds == 1 {
				changes <- "b"
				changes <- "c"
			}
		}
	}
	// Output:
	// round: [a]
	// round: [b c]
}
