package metric

import (
	"fmt"
	"os"
	"time"
)

// Emit prints one "metric value unit" line on stdout. A float64 value is
// printed with three decimals, any other with its default format.
func Emit(metric string, value any, unit string) {
	if v, ok := value.(float64); ok {
		fmt.Printf("%s %.3f %s\n", metric, v, unit)
		return
	}
	fmt.Printf("%s %v %s\n", metric, value, unit)
}

// Fatalf prints "FATAL: " and the formatted message on stderr and exits
// with status 1: a benchmark that cannot finish reports no figures.
func Fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "FATAL: "+format+"\n", args...)
	os.Exit(1)
}

// MS returns d in milliseconds.
func MS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// US returns d in microseconds.
func US(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// MiB returns b in mebibytes.
func MiB(b uint64) float64 { return float64(b) / (1 << 20) }
