#!/usr/bin/env bash
# Runs every fuzz target for a bounded time (FUZZTIME, default 15s each) on
# top of its checked-in seed corpus. New crashers are written to the
# package's testdata/fuzz/<Target>/ and fail the step. Usage:
#   .ci/fuzz.sh            # 15s per target
#   FUZZTIME=60s .ci/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
t="${FUZZTIME:-15s}"
# One worker: CI has two cores and the fuzzed code starts goroutines.
# Minimizing a new input is bounded by runs, not by the default 60s, which
# would spend a short budget on minimizing alone where one run takes a
# millisecond (signing a certificate).
for target in ./krt:FuzzModel ./sources/folder:FuzzDecodeFile ./sources/folder:FuzzLoadFS ./xds:FuzzADS ./xds:FuzzRequestCodec ./security/caserver:FuzzCreateCertificate; do
	pkg="${target%%:*}" name="${target##*:}"
	echo "=== fuzz $name ($pkg, $t)"
	go test -run '^$' -fuzz "^${name}\$" -fuzztime "$t" -fuzzminimizetime 100x -parallel 1 "$pkg"
done
