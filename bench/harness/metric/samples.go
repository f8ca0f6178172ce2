package metric

import (
	"slices"
	"time"
)

// Percentile returns the nearest-rank percentile p (0 to 1) of samples,
// which may be in any order; 0 when there are none.
func Percentile(samples []time.Duration, p float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	i := int(float64(len(s))*p+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// Mean returns the mean of samples; 0 when there are none.
func Mean(samples []time.Duration) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	var sum time.Duration
	for _, x := range samples {
		sum += x
	}
	return sum / time.Duration(len(samples))
}

// MeanInt returns the mean of v; 0 when v is empty.
func MeanInt(v []int) float64 {
	if len(v) == 0 {
		return 0
	}
	sum := 0
	for _, x := range v {
		sum += x
	}
	return float64(sum) / float64(len(v))
}
