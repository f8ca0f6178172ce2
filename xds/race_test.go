//go:build race

package xds_test

// raceEnabled scales tests down under the race detector, which slows the
// server and the clients ten-fold.
const raceEnabled = true
