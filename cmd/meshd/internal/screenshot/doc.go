// Package screenshot renders the README's picture of the debug UI,
// docs/img/debug-ui.png, from the real demo, so that the picture shows
// what `go run ./cmd/meshd` shows. Its test starts meshd's demo in-process
// on loopback with ports the system picks, opens the UI in headless
// Chromium, and checks that the page draws the demo's graph, every
// collection and no page error. With -update-screenshot it then opens one
// collection's panel and writes the PNG:
//
//	go test ./cmd/meshd/internal/screenshot -update-screenshot
//
// Without a Chromium binary (.ci/install-chromium.sh installs one), or with
// -short, the test is skipped. The package holds no code of its own.
package screenshot
