package app

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestErrorRecordHasNoStack: an error is about input or the outside
// world, so its record is one line with no call-site stack.
func TestErrorRecordHasNoStack(t *testing.T) {
	for _, format := range []string{"console", "json"} {
		var buf bytes.Buffer
		l, err := NewLogger(&buf, "info", format)
		if err != nil {
			t.Fatal(err)
		}
		l.Error("manifest rejected", "problem", "web.yaml:3: invalid YAML")
		if out := buf.String(); strings.Count(out, "\n") != 1 || strings.Contains(out, ".go:") || strings.Contains(out, "stacktrace") {
			t.Errorf("%s: error record is not one line without a stack:\n%s", format, out)
		}
	}
}

func TestLogHold(t *testing.T) {
	t.Run("release writes the held records in order, then passes through", func(t *testing.T) {
		buf, l, hold := heldLogger(t, "json")
		l.Info("first")
		l.With("source", "demo").Warn("second")
		l.Debug("below the level")
		if buf.Len() != 0 {
			t.Fatalf("written before Release:\n%s", buf.String())
		}
		hold.Release()
		l.Info("third")
		hold.Release()
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if len(lines) != 3 || !strings.Contains(lines[0], `"first"`) ||
			!strings.Contains(lines[1], `"second"`) || !strings.Contains(lines[1], `"source":"demo"`) || !strings.Contains(lines[2], `"third"`) {
			t.Errorf("output:\n%s", buf.String())
		}
	})
	t.Run("drop discards the held records, then passes through", func(t *testing.T) {
		buf, l, hold := heldLogger(t, "console")
		l.Error("on the way to failing")
		hold.Drop()
		l.Info("after")
		if out := buf.String(); strings.Contains(out, "on the way") || !strings.Contains(out, "after") {
			t.Errorf("output:\n%s", out)
		}
	})
	if _, _, err := NewHeldLogger(&bytes.Buffer{}, "", "yaml"); err == nil {
		t.Error("bad format accepted")
	}
}

// heldLogger returns a held logger at level info, in format, writing to
// the buffer returned.
func heldLogger(t *testing.T, format string) (*bytes.Buffer, *slog.Logger, *LogHold) {
	t.Helper()
	var buf bytes.Buffer
	l, hold, err := NewHeldLogger(&buf, "info", format)
	if err != nil {
		t.Fatal(err)
	}
	return &buf, l, hold
}
