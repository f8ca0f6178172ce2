//go:build !race

package xds_test

const raceEnabled = false
