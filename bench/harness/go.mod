module github.com/meshd/meshd/bench/harness

go 1.24
