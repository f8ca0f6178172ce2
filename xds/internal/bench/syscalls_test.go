package main

import (
	"net"
	"testing"
)

func TestCountingListener(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	var counts ioCounts
	cl := countingListener{lis, &counts}
	go func() {
		c, err := net.Dial("tcp", lis.Addr().String())
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 4)
		c.Read(buf)             // the server's write
		c.Write([]byte("pong")) // then the server reads
	}()
	c, err := cl.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, s := range []string{"pi", "ng"} {
		if _, err := c.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 4)
	if _, err := c.Read(buf); err != nil {
		t.Fatal(err)
	}
	if w, r := counts.snapshot(); w != 2 || r != 1 {
		t.Fatalf("writes, reads = %d, %d; want 2, 1", w, r)
	}
}
