# meshd tasks. `just` is optional: every recipe is one or two plain commands.
# Install it with `npm i -g rust-just` (or your package manager).

# List the recipes.
default:
    @just --list

# Serve the bundled demo mesh; pass flags through, e.g. `just run --config-dir cmd/meshd/internal/demo`.
run *FLAGS:
    go run ./cmd/meshd {{FLAGS}}

# Run the whole test suite (what CI runs). krt is a module of its own in
# the go.work workspace, which ./... does not reach into: name it too.
test:
    go test ./... ./bench/harness/...

# Run the suite under the race detector.
race:
    go test -race ./... ./bench/harness/...

# Run the Go benchmarks (engine, model, folder source, xDS); no tests.
bench:
    go test -run '^$' -bench . -benchmem ./krt/... ./collections/... ./sources/... ./xds/...

# The krt workload on our engine alone (see docs/benchmarks.md).
bench-krt *FLAGS:
    go run ./bench/krt {{FLAGS}}

# Ours and theirs back to back (Istio's krt, the plain-map floor, go-control-plane), as Markdown tables;
# e.g. `just compare -n 1000 -m 10000`. The first run compiles Istio (minutes).
compare *FLAGS:
    bench/compare.sh {{FLAGS}}

# The xDS server under many streams (see docs/benchmarks.md).
bench-xds *FLAGS:
    go run ./xds/internal/bench {{FLAGS}}

# Commit subjects, gofmt, staticcheck, deadcode and vet, as CI runs them (fails on any finding).
lint:
    .ci/subjects.sh
    .ci/lint.sh all
    go vet ./... ./krt/... ./bench/harness/...

# Drive the debug UI in headless Chromium (installs it with apt if absent).
ui-test:
    bash .ci/install-chromium.sh
    go test -count=1 -run TestBrowser -v ./cmd/meshd/internal/debugui/

# Rewrite the README's debug UI screenshots (docs/img/).
screenshot:
    bash .ci/install-chromium.sh
    MESHD_UPDATE_SCREENSHOT=1 go test -count=1 -run TestBrowser ./cmd/meshd/internal/debugui/
