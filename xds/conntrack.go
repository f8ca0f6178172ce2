package xds

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// connTracker remembers the open connections its listeners accepted, by
// address pair, so that a stream can find its own (the gRPC server hands
// a stream its addresses, not its connection) and later tell how it
// ended: see closeReason.
type connTracker struct {
	mu sync.Mutex // a leaf: held with no other lock
	// conns holds more than one connection under a pair only on
	// transports whose addresses are not unique (in-memory pipes).
	conns map[connKey][]*trackedConn
}

type connKey struct{ local, remote string }

func keyOf(local, remote net.Addr) connKey {
	k := connKey{}
	if local != nil {
		k.local = local.String()
	}
	if remote != nil {
		k.remote = remote.String()
	}
	return k
}

// creds wraps the transport credentials of a listener (insecure ones
// for nil) so that the tracker follows each connection once its
// handshake is done. Wrapping the connection, not the listener, leaves
// gRPC the raw TCP connection, on which it sets its TCP user timeout.
func (t *connTracker) creds(c credentials.TransportCredentials) credentials.TransportCredentials {
	if c == nil {
		c = insecure.NewCredentials()
	}
	return &trackingCreds{TransportCredentials: c, t: t}
}

// find returns the open connection between local and remote; nil when
// none or several are.
func (t *connTracker) find(local, remote net.Addr) *trackedConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cs := t.conns[keyOf(local, remote)]; len(cs) == 1 {
		return cs[0]
	}
	return nil
}

func (t *connTracker) add(c *trackedConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conns == nil {
		t.conns = map[connKey][]*trackedConn{}
	}
	t.conns[c.key] = append(t.conns[c.key], c)
}

func (t *connTracker) remove(c *trackedConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cs := t.conns[c.key]
	for i, o := range cs {
		if o == c {
			cs = append(cs[:i:i], cs[i+1:]...)
			break
		}
	}
	if len(cs) == 0 {
		delete(t.conns, c.key)
	} else {
		t.conns[c.key] = cs
	}
}

type trackingCreds struct {
	credentials.TransportCredentials
	t *connTracker
}

func (c *trackingCreds) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := c.TransportCredentials.ServerHandshake(raw)
	if err != nil {
		return nil, nil, err
	}
	tc := &trackedConn{Conn: conn, t: c.t, key: keyOf(raw.LocalAddr(), raw.RemoteAddr()), accepted: time.Now()}
	tc.lastRead.Store(tc.accepted.UnixNano())
	c.t.add(tc)
	return tc, info, nil
}

func (c *trackingCreds) Clone() credentials.TransportCredentials {
	return &trackingCreds{TransportCredentials: c.TransportCredentials.Clone(), t: c.t}
}

// trackedConn records when its connection last read and who closed it.
// gRPC closes a connection it ends itself (keepalive, maximum age,
// shutdown) before any read fails, and one the client ends after a read
// failed; both before it cancels the connection's streams.
type trackedConn struct {
	net.Conn
	t        *connTracker
	key      connKey
	accepted time.Time
	// lastRead is the UnixNano time of the last read that returned bytes.
	lastRead atomic.Int64

	mu         sync.Mutex // guards following
	readFailed bool
	closed     time.Time
	byServer   bool
}

func (c *trackedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.lastRead.Store(time.Now().UnixNano())
	}
	if err != nil {
		c.mu.Lock()
		if c.closed.IsZero() {
			c.readFailed = true
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *trackedConn) Close() error {
	c.mu.Lock()
	first := c.closed.IsZero()
	if first {
		c.closed, c.byServer = time.Now(), !c.readFailed
	}
	c.mu.Unlock()
	if first {
		c.t.remove(c)
	}
	return c.Conn.Close()
}

// end returns how the connection ended so far; a nil c is untracked.
func (c *trackedConn) end() connEnd {
	if c == nil {
		return connEnd{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := connEnd{known: true, closed: !c.closed.IsZero(), byServer: c.byServer}
	if e.closed {
		e.age = c.closed.Sub(c.accepted)
		e.silent = c.closed.Sub(time.Unix(0, c.lastRead.Load()))
	}
	return e
}
