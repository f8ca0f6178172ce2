package main

import (
	"net"
	"sync/atomic"
)

// ioCounts counts the Write and Read calls of the server's connections.
// A Write is one system call unless the socket's buffer is full, and on
// loopback it also delivers the bytes and wakes the reader; a Read that
// finds nothing waiting makes two (EAGAIN, then the read once the poller
// wakes it). Per push they are the transport's floor under everything the
// server itself does (docs/benchmarks.md).
type ioCounts struct {
	writes, reads atomic.Int64
}

// snapshot returns the counts so far.
func (c *ioCounts) snapshot() (writes, reads int64) {
	return c.writes.Load(), c.reads.Load()
}

// countingListener counts the writes and reads of every connection it
// accepts in counts.
type countingListener struct {
	net.Listener
	counts *ioCounts
}

// Accept returns the next connection, counted.
func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, counts: l.counts}, nil
}

// countingConn counts its writes and reads in counts; a read that fails
// (EOF, a closed connection) counts too, as the call was made.
type countingConn struct {
	net.Conn
	counts *ioCounts
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.counts.writes.Add(1)
	return c.Conn.Write(b)
}

func (c *countingConn) Read(b []byte) (int, error) {
	c.counts.reads.Add(1)
	return c.Conn.Read(b)
}
