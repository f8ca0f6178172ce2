// Command xdsclients-install installs the xDS client implementations the
// tests run (see package xdsclients), as .ci/run does before the tests,
// and prints each one's version. It exits non-zero if one cannot be
// installed; the tests would then skip it.
package main
