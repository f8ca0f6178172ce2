//go:build !race

package krtmodule

const raceEnabled = false
