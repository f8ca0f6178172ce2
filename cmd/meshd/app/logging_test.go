package app

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestNewLogger(t *testing.T) {
	tests := []struct {
		name, level, format string
		check               func(t *testing.T, out string)
	}{
		{"json info", "info", "json", func(t *testing.T, out string) {
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 2 {
				t.Fatalf("got %d lines, want info and error only:\n%s", len(lines), out)
			}
			var rec map[string]any
			if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
				t.Fatalf("not JSON: %q: %v", lines[0], err)
			}
			if rec["msg"] != "hello" || rec["level"] != "info" || rec["collection"] != "pods" {
				t.Errorf("record = %v", rec)
			}
		}},
		{"console debug", "debug", "console", func(t *testing.T, out string) {
			if !strings.Contains(out, "DEBUG") || !strings.Contains(out, "hello") || !strings.Contains(out, `"collection": "pods"`) {
				t.Errorf("console output:\n%s", out)
			}
		}},
		{"error only", "error", "", func(t *testing.T, out string) {
			if strings.Contains(out, "hello") || !strings.Contains(out, "boom") {
				t.Errorf("output:\n%s", out)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			l, err := NewLogger(&buf, tc.level, tc.format)
			if err != nil {
				t.Fatal(err)
			}
			l.Debug("debugging")
			l.Info("hello", "collection", "pods")
			l.Error("boom")
			tc.check(t, buf.String())
		})
	}
	if _, err := NewLogger(&bytes.Buffer{}, "loud", ""); err == nil {
		t.Error("bad level accepted")
	}
}
