// Package child is the parent's side of the line protocol that drives
// xds/internal/bench's client process (its binary run with -child): the
// parent writes one command a line on the child's stdin (CONNECT, EXPECT,
// DROP, QUIT, ...) and reads the child's answers, one a line on its stdout
// (STARTED, READY, ARMED n, GOT, SETTLED bytes msgs cpu_us, ...), so that
// the clients' CPU is measured apart from the server's.
//
// Both xds/internal/bench and bench/gcp-snapshot drive the same child this
// way. These are benchmark programs: a broken protocol (an unexpected
// line, a child that exits or stays silent past the timeout) ends the run
// through metric.Fatalf rather than returning an error each caller would
// only print.
package child
