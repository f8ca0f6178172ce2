// Package metric is the output and the measurements every meshd benchmark
// program shares: one "metric value unit" line per figure on stdout (the
// format bench/compare.sh and bench/table read), the process's CPU time
// and heap, percentiles and means of samples, and Fatalf, which ends a
// failed run with a "FATAL: " line on stderr and exit status 1.
package metric
