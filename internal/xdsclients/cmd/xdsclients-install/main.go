package main

import (
	"fmt"
	"os"

	"github.com/meshd/meshd/internal/xdsclients"
)

func main() {
	failed := false
	for _, impl := range xdsclients.Implementations() {
		if err := impl.Install(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", impl.Name, err)
			failed = true
			continue
		}
		fmt.Printf("%s: %s\n", impl.Name, impl.Version())
	}
	if failed {
		os.Exit(1)
	}
}
