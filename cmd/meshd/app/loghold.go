package app

import (
	"io"
	"log/slog"
	"sync"

	"go.uber.org/zap/zapcore"
)

// LogHold holds the records of a logger from NewHeldLogger until Release
// or Drop. The binary holds them while New runs: a start-up that fails
// then prints one line saying why, as docs/operations.md promises, and
// not the progress lines that led up to it. It is safe for concurrent use.
type LogHold struct {
	mu       sync.Mutex // guards the following
	held     []heldEntry
	released bool
}

// heldEntry is one record, with the core (and so the fields of its
// logger) it is to be written to.
type heldEntry struct {
	core   zapcore.Core
	entry  zapcore.Entry
	fields []zapcore.Field
}

// NewHeldLogger is NewLogger with every record held by the returned
// LogHold until its Release or Drop.
func NewHeldLogger(w io.Writer, level, format string) (*slog.Logger, *LogHold, error) {
	core, err := newCore(w, level, format)
	if err != nil {
		return nil, nil, err
	}
	h := &LogHold{}
	return newSlog(holdCore{Core: core, hold: h}), h, nil
}

// Release writes the held records in order, then lets each later record
// through as it comes. Calls after the first Release or Drop do nothing.
func (h *LogHold) Release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		return
	}
	for _, e := range h.held {
		// A record that fails to write now would have failed then too;
		// there is nowhere better to report it.
		_ = e.core.Write(e.entry, e.fields)
	}
	h.held, h.released = nil, true
}

// Drop discards the held records, then lets each later record through.
func (h *LogHold) Drop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held, h.released = nil, true
}

// write holds a record, or writes it once released.
func (h *LogHold) write(core zapcore.Core, ent zapcore.Entry, fields []zapcore.Field) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.released {
		h.held = append(h.held, heldEntry{core, ent, fields})
		return nil
	}
	return core.Write(ent, fields)
}

// holdCore is a zap core writing through its LogHold.
type holdCore struct {
	zapcore.Core
	hold *LogHold
}

func (c holdCore) With(fields []zapcore.Field) zapcore.Core {
	return holdCore{Core: c.Core.With(fields), hold: c.hold}
}

func (c holdCore) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(ent.Level) {
		return ce.AddCore(ent, c)
	}
	return ce
}

func (c holdCore) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	return c.hold.write(c.Core, ent, fields)
}
