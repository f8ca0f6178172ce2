package krt_test

import (
	"context"
	"fmt"

	"github.com/meshd/meshd/krt"
)

func ExampleRegistration_WaitVersion() {
	g := krt.NewGraph()
	pods := krt.NewStatic[Pod](g)
	var seen []string // written by the handler, read after WaitVersion
	reg := pods.Register(func(b krt.Batch[Pod]) {
		for _, e := range b.Events {
			seen = append(seen, fmt.Sprintf("v%d %s %s", b.Version, e.Type, e.Key))
		}
	})
	defer reg.Unregister()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- g.Run(ctx) }()

	pods.Set(Pod{Name: "a", Namespace: "ns"})
	v := pods.Delete("ns/a")
	// No sleep: return once the handler has handled every batch up to v.
	if err := reg.WaitVersion(ctx, v); err != nil {
		fmt.Println(err)
	}
	fmt.Println(seen)
	cancel()
	<-done
	// Output: [v1 add ns/a v2 delete ns/a]
}
