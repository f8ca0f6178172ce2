package xds_test

import (
	"testing"
	"time"

	"github.com/meshd/meshd/xds"
)

// TestMaxConnectionAge: with a maximum connection age, a grpc-go
// proxyless client is made to reconnect again and again; naming what it
// holds, it is resumed each time and sent nothing, and its RPCs never
// fail.
func TestMaxConnectionAge(t *testing.T) {
	const target = "echo.default.svc.cluster.local:7070"
	const cluster = "outbound|7070||echo.default.svc.cluster.local"
	f := newFixture(t, xds.WithMaxConnectionAge(500*time.Millisecond, 100*time.Millisecond))
	a1 := startBackend(t, "127.0.0.21")
	f.cds.Set(edsCluster(cluster))
	f.eds.Set(cla(cluster, a1.addr))
	f.rds.Set(weightedRoute(target, target, []string{cluster}, []uint32{1}))
	f.lds.Set(apiListener(target, target))

	cc := xdsClient(t, f.addr, "aging-client", target)
	call(t, cc)
	pushes := func() uint64 {
		var n uint64
		for _, v := range f.srv.Stats().Pushes {
			n += v
		}
		return n
	}
	first := pushes()
	if first == 0 {
		t.Fatal("no push for the first connection")
	}

	// Over several connection ages (each followed by grpc-go's reconnect
	// backoff), RPCs keep working.
	deadline := time.Now().Add(20 * time.Second)
	for f.srv.Stats().Streams < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d streams in 20s with a 0.5s connection age: the client was not made to reconnect", f.srv.Stats().Streams)
		}
		call(t, cc)
		time.Sleep(20 * time.Millisecond)
	}
	// Every reconnect is resumed, type by type, once the new stream's
	// requests are in.
	resumedAll := func(st xds.Stats) bool {
		for _, typ := range []string{"lds", "rds", "cds", "eds"} {
			if st.Resumed[typ] < st.Streams-1 {
				return false
			}
		}
		return true
	}
	for st := f.srv.Stats(); !resumedAll(st); st = f.srv.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("streams %d, resumed %v: want every reconnect resumed", st.Streams, st.Resumed)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := pushes(); got != first {
		t.Errorf("pushes went from %d to %d across reconnects with nothing changed", first, got)
	}
}
