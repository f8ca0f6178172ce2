//go:build race

package krt_test

// raceEnabled is true when the race detector is on: it slows the
// heaviest tests tenfold, so they do fewer rounds.
const raceEnabled = true
