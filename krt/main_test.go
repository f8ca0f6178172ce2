package krt_test

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// TestMain fails the run when a goroutine outlives the tests: after Run
// returns, nothing krt started may remain (see Graph.Run).
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := leakedGoroutines(20 * time.Second); len(leaked) > 0 {
			fmt.Fprintf(os.Stderr, "krt: %d goroutines outlived the tests:\n\n", len(leaked))
			for _, g := range leaked {
				fmt.Fprintf(os.Stderr, "%s\n\n", g)
			}
			code = 1
		}
	}
	os.Exit(code)
}
