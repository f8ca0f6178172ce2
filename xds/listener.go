package xds

import (
	"net"
	"sync"
)

// limitListener serves at most n connections at once: a connection
// accepted beyond the limit is closed at once, so that its client backs
// off and retries (perhaps another replica) instead of waiting in the
// accept queue until its handshake times out.
type limitListener struct {
	net.Listener
	sem chan struct{}
	// rejected is told of each connection closed for the limit.
	rejected func(net.Addr)
}

func newLimitListener(l net.Listener, n int, rejected func(net.Addr)) net.Listener {
	return &limitListener{Listener: l, sem: make(chan struct{}, n), rejected: rejected}
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.sem <- struct{}{}:
			return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
		default:
			// Told first, so that the count is up by the time the client
			// sees the close.
			l.rejected(c.RemoteAddr())
			c.Close()
		}
	}
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
