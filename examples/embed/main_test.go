package main

import (
	"bytes"
	"testing"

	"github.com/meshd/meshd/internal/leakcheck"
)

// want is what the example prints: the handler's view of each transaction,
// then a consistent read.
const want = `v1 add    shop/web 10.0.0.1
v2 update shop/web 10.0.0.1,10.0.0.2
v4 update shop/web 10.0.0.2
at v4: 2 pods, shop/web -> 10.0.0.2, 10.0.0.2 is shop/web-2
`

func TestRun(t *testing.T) {
	defer leakcheck.VerifyNone(t)
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}
