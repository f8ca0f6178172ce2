package kube

import (
	"testing"

	"go.uber.org/goleak"
)

// leakOptions ignore the idle keep-alive connections of client-go's
// process-wide transport cache, which outlive any one client by design.
var leakOptions = []goleak.Option{
	goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
	goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
	goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
	goleak.IgnoreAnyFunction("net/http.(*http2ClientConn).readLoop"),
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(withTestEnv{m}, leakOptions...)
}
