package xds_test

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// freezer is a loopback TCP proxy to a server. Once frozen it forwards
// nothing more either way and closes nothing: the client behind it looks
// hung to the server.
type freezer struct {
	lis    net.Listener
	frozen atomic.Bool
	done   chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  []net.Conn
}

func newFreezer(t *testing.T, server string) *freezer {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{lis: lis, done: make(chan struct{})}
	f.wg.Go(func() { f.accept(server) })
	t.Cleanup(func() {
		close(f.done)
		lis.Close()
		f.mu.Lock()
		for _, c := range f.conns {
			c.Close()
		}
		f.mu.Unlock()
		f.wg.Wait()
	})
	return f
}

func (f *freezer) addr() string { return f.lis.Addr().String() }

func (f *freezer) freeze() { f.frozen.Store(true) }

func (f *freezer) accept(server string) {
	for {
		c, err := f.lis.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", server)
		if err != nil {
			c.Close()
			continue
		}
		f.mu.Lock()
		f.conns = append(f.conns, c, s)
		f.mu.Unlock()
		f.wg.Go(func() { f.pipe(s, c) })
		f.wg.Go(func() { f.pipe(c, s) })
	}
}

// pipe copies src to dst until either fails or the freezer freezes;
// frozen, it waits for the test's end.
func (f *freezer) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if f.frozen.Load() {
			<-f.done
			return
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
