//go:build race

package krtmodule

// raceEnabled says this test binary was built with -race, so the krt
// suite it runs is built with -race too.
const raceEnabled = true
