#!/usr/bin/env bash
# Checks that fail on any finding: lint.sh gofmt|staticcheck|deadcode|all.
# .ci/run runs each as a step; `just lint` runs them all.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:$(go env GOPATH)/bin"

# Pinned so a new release's checks cannot fail an unchanged tree.
staticcheck_version=v0.8.2
deadcode_version=v0.52.0

# gofmt lists tracked Go files whose formatting gofmt would change.
check_gofmt() {
	local bad
	bad=$(git ls-files -z '*.go' | xargs -0 gofmt -l)
	if [[ -n $bad ]]; then
		printf 'gofmt would change (run gofmt -w):\n%s\n' "$bad" >&2
		return 1
	fi
}

# staticcheck names ./krt/... and ./bench/harness/... too: ./... stops at
# a nested module.
check_staticcheck() {
	if ! staticcheck -version 2>/dev/null | grep -q "(${staticcheck_version#v})"; then
		go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version"
	fi
	staticcheck ./... ./krt/... ./bench/harness/...
}

# deadcode reports functions no main package or test reaches. It runs once
# per module, as its patterns do not cross into krt. From the root it also
# reports krt's and bench/harness's API that meshd does not call (their
# module paths extend meshd's); those lines are dropped, their own runs
# judge them.
check_deadcode() {
	local out found=0
	for dir in . krt bench/harness; do
		out=$(cd "$dir" && go run "golang.org/x/tools/cmd/deadcode@$deadcode_version" -test ./...)
		if [[ $dir == . ]]; then
			out=$(grep -Ev '^(krt|bench/harness)/' <<<"$out" || true)
		fi
		if grep 'unreachable func' <<<"$out" >&2; then
			found=1
		fi
	done
	if ((found)); then
		echo "deadcode: remove the functions above, or test what they do" >&2
		return 1
	fi
}

case "${1:-all}" in
gofmt | staticcheck | deadcode) "check_$1" ;;
all) check_gofmt && check_staticcheck && check_deadcode ;;
*)
	echo "usage: $0 gofmt|staticcheck|deadcode|all" >&2
	exit 2
	;;
esac
