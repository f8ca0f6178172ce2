module github.com/meshd/meshd/krt

go 1.24
