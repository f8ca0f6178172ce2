package child

import (
	"flag"
	"os"
	"testing"
	"time"
)

func TestFleetFlags(t *testing.T) {
	var f Fleet
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	f.Register(fs)
	if err := fs.Parse([]string{"-n", "5", "-m", "20", "-quiet", "1s", "-static-windows"}); err != nil {
		t.Fatal(err)
	}
	want := Fleet{N: 5, M: 20, P: 100, Changes: 100, Quiet: time.Second, Timeout: 5 * time.Minute, Seed: 1, StaticWindows: true}
	if f != want {
		t.Errorf("parsed %+v, want %+v", f, want)
	}
	if err := f.Check(); err != nil {
		t.Errorf("Check of %+v: %v", f, err)
	}
	for _, bad := range []Fleet{{N: 0, M: 1, P: 1}, {N: 2, M: 1, P: 1}, {N: 1, M: 1, P: 0}} {
		if err := bad.Check(); err == nil {
			t.Errorf("Check of %+v returned no error", bad)
		}
	}
}

func TestFleetConnect(t *testing.T) {
	f := Fleet{N: 1, M: 1, P: 2, Timeout: 10 * time.Second}
	c, err := f.Start(os.Args[0], "127.0.0.1:1", false, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Quit()
	ready := false
	c.Connect(f.P, func() { ready = true })
	if !ready {
		t.Error("Connect did not run ready")
	}
}
