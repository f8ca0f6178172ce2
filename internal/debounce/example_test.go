package debounce_test

import (
	"fmt"
	"time"

	"github.com/meshd/meshd/internal/debounce"
)

// Example shows the select loop: a burst of events is handed on as one
// batch once the events pause for the quiet period.
func Example() {
	events := make(chan string, 3)
	events <- "a"
	events <- "b"
	events <- "c"
	close(events)

	t := debounce.NewTimer(debounce.Policy{Quiet: 50 * time.Millisecond, MaxDelay: time.Second})
	var batch []string
	for events != nil || t.C() != nil {
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			batch = append(batch, ev)
			t.Add()
		case <-t.C():
			t.Done()
			fmt.Println("batch:", batch)
			batch = nil
		}
	}
	// Output: batch: [a b c]
}
