package apptest

import (
	"context"
	"testing"

	"github.com/meshd/meshd/cmd/meshd/app"
)

// Start runs an App for cfg until stop is called. stop ends Run, waits for
// it to return and fails t if Run failed; call it once, before the test
// ends (t.Cleanup(stop) will do). Start fails t if cfg is invalid.
func Start(t testing.TB, cfg app.Config) (a *app.App, stop func()) {
	t.Helper()
	a, err := app.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	return a, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
}
