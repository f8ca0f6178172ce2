package workload

import (
	"flag"
	"io"
	"testing"
	"time"
)

func TestConfigFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr bool
	}{
		{"defaults", nil, false},
		{"all set", []string{"-n", "5", "-m", "50", "-latency-changes", "1", "-churn-changes", "2", "-probe-changes", "3",
			"-svc-lookup", "none", "-build", "incremental", "-mesh-change=false", "-timeout", "1s", "-seed", "7"}, false},
		{"no services", []string{"-n", "0"}, true},
		{"fewer pods than services", []string{"-n", "5", "-m", "4"}, true},
		{"unknown build", []string{"-build", "lazy"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c Config
			fs := flag.NewFlagSet("bench", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			c.Register(fs, "ns or none")
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if err := c.Check(); (err != nil) != tc.wantErr {
				t.Fatalf("Check = %v, want error %v", err, tc.wantErr)
			}
		})
	}
	var c Config
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	c.Register(fs, "")
	if err := fs.Parse([]string{"-n", "5", "-m", "50", "-churn-changes", "2", "-build", "incremental", "-mesh-change=false", "-timeout", "1s", "-seed", "7"}); err != nil {
		t.Fatal(err)
	}
	want := Config{N: 5, M: 50, LatencyChanges: 2000, ChurnChanges: 2, ProbeChanges: 100, SvcLookup: "ns", Build: "incremental",
		Timeout: time.Second, Seed: 7}
	if c != want {
		t.Errorf("parsed %+v, want %+v", c, want)
	}
}
