package metric

import (
	"runtime"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	samples := []time.Duration{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	tests := []struct {
		p    float64
		want time.Duration
	}{
		{0, 1}, {0.1, 1}, {0.5, 5}, {0.51, 6}, {0.99, 10}, {1, 10},
	}
	for _, tc := range tests {
		if got := Percentile(samples, tc.p); got != tc.want {
			t.Errorf("Percentile(p=%v) = %v, want %v", tc.p, got, tc.want)
		}
	}
	if samples[0] != 5 {
		t.Errorf("Percentile sorted its argument: %v", samples)
	}
	if got := Percentile(nil, 0.5); got != 0 {
		t.Errorf("Percentile(nil) = %v, want 0", got)
	}
}

func TestMeans(t *testing.T) {
	if got := Mean([]time.Duration{1, 2, 6}); got != 3 {
		t.Errorf("Mean = %v, want 3", got)
	}
	if got := Mean(nil); got != 0 {
		t.Errorf("Mean(nil) = %v, want 0", got)
	}
	if got := MeanInt([]int{1, 2}); got != 1.5 {
		t.Errorf("MeanInt = %v, want 1.5", got)
	}
	if got := MeanInt(nil); got != 0 {
		t.Errorf("MeanInt(nil) = %v, want 0", got)
	}
}

func TestUnits(t *testing.T) {
	if got := MS(1500 * time.Microsecond); got != 1.5 {
		t.Errorf("MS = %v, want 1.5", got)
	}
	if got := US(2500 * time.Nanosecond); got != 2.5 {
		t.Errorf("US = %v, want 2.5", got)
	}
	if got := MiB(3 << 19); got != 1.5 {
		t.Errorf("MiB = %v, want 1.5", got)
	}
}

func TestProcess(t *testing.T) {
	before := CPU()
	for i := 0; CPU() == before && i < 1e8; i++ {
	}
	if CPU() <= before {
		t.Error("CPU did not grow while spinning")
	}
	if d := IdleCPU(10 * time.Millisecond); d < 0 {
		t.Errorf("IdleCPU = %v, want >= 0", d)
	}
	keep := make([]byte, 8<<20)
	inuse, alloc := Heap()
	if live := HeapAlloc(); inuse < 8<<20 || alloc < 8<<20 || live < 8<<20 {
		t.Errorf("Heap = %d in use, %d allocated; want both >= 8 MiB while 8 MiB is live", inuse, alloc)
	}
	runtime.KeepAlive(keep)
}
