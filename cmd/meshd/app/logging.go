package app

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"

	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"
)

// NewLogger returns a slog.Logger backed by a zap core writing to w, at
// the given level (debug, info, warn, error; empty means info) and format
// (console or json; empty means console). Libraries keep taking a
// *slog.Logger; only the binary knows it is zap.
func NewLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	core, err := newCore(w, level, format)
	if err != nil {
		return nil, err
	}
	return newSlog(core), nil
}

// newSlog puts core behind slog. zapslog would add the stack of the
// logging call to every error record, but an error logged here is about
// input or the outside world, and the call site is no help to the reader;
// a panic's own stack travels with the panic (krt logs it). So no record
// gets a call-site stack.
func newSlog(core zapcore.Core) *slog.Logger {
	return slog.New(zapslog.NewHandler(core, zapslog.AddStacktraceAt(slog.Level(math.MaxInt))))
}

// newCore returns the zap core NewLogger writes through.
func newCore(w io.Writer, level, format string) (zapcore.Core, error) {
	lvl, err := parseLevel(level)
	if err != nil {
		return nil, err
	}
	enc := zapcore.EncoderConfig{
		TimeKey:        "ts",
		LevelKey:       "level",
		NameKey:        "logger",
		MessageKey:     "msg",
		StacktraceKey:  "stacktrace",
		LineEnding:     zapcore.DefaultLineEnding,
		EncodeTime:     zapcore.ISO8601TimeEncoder,
		EncodeDuration: zapcore.StringDurationEncoder,
		EncodeName:     zapcore.FullNameEncoder,
	}
	var encoder zapcore.Encoder
	switch format {
	case "", "console":
		enc.EncodeLevel = zapcore.CapitalLevelEncoder
		encoder = zapcore.NewConsoleEncoder(enc)
	case "json":
		enc.EncodeLevel = zapcore.LowercaseLevelEncoder
		encoder = zapcore.NewJSONEncoder(enc)
	default:
		return nil, fmt.Errorf("--log-format %q: want console or json", format)
	}
	return zapcore.NewCore(encoder, zapcore.Lock(zapcore.AddSync(w)), lvl), nil
}

func parseLevel(s string) (zapcore.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return zapcore.DebugLevel, nil
	case "", "info":
		return zapcore.InfoLevel, nil
	case "warn", "warning":
		return zapcore.WarnLevel, nil
	case "error":
		return zapcore.ErrorLevel, nil
	}
	return 0, fmt.Errorf("--log-level %q: want debug, info, warn or error", s)
}
