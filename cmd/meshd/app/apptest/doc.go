// Package apptest runs a meshd App inside a test of another package, the
// way an embedder's test would: Start, then stop before the test's own
// checks of what is left running (such as a goroutine leak check).
package apptest
