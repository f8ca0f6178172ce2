module github.com/meshd/meshd/bench/limit

go 1.26.8
