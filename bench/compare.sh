#!/usr/bin/env bash
# compare.sh builds meshd's benchmarks and the comparison workloads under
# bench/ (Istio's krt, the plain-map floor, go-control-plane's snapshot
# cache), runs ours and theirs back to back on this machine, and prints
# Markdown tables of the figures side by side, with ratios.
#
#   bench/compare.sh                                   # both, n=1000 m=10000 p=100
#   bench/compare.sh -n 100 -m 1000 -p 10 -changes 50
#   ONLY=krt ROUNDS=3 bench/compare.sh -n 5000 -m 50000
#   BASE=main ROUNDS=3 bench/compare.sh -n 1000 -m 10000   # main against this tree
#
# With BASE (a revision: main, a branch, a commit) it compares meshd with
# itself instead: it checks BASE out in a temporary git worktree, builds
# meshd's own benchmarks (bench/krt; xds/internal/bench, SotW and Delta)
# there and here, runs the base's and this tree's alternately, ROUNDS
# times, and prints both with the ratio base ÷ this tree (above 1: this
# tree is better). The worktree is removed on exit. Flags go to both
# builds alike, so use those the base knows too (a flag it lacks fails its
# runs, which are reported and left out).
#
# krt: bench/krt (ours), bench/istio-krt (Istio's krt), bench/limit (the
# floor: the same outputs from scratch with plain maps). xds:
# xds/internal/bench (ours, SotW and Delta clients) and bench/gcp-snapshot
# (go-control-plane), both with the same P wildcard clients.
#
# Flags pass through to the benchmarks that take them:
#   -n -m                   all
#   -latency-changes -churn-changes -probe-changes -svc-lookup -build
#   -mesh-change            krt (ours and Istio's)
#   -p -changes -quiet      xds (ours and go-control-plane); -changes is 20
#                           unless given, as each go-control-plane change
#                           takes seconds at the default scale
#   -versions               go-control-plane only; -debounce ours only
#   -handler-delivery       ours only (krt: goroutine or inline)
#   -timeout -seed          all but the floor
# Environment: ONLY=krt|xds runs one comparison; ROUNDS (1) runs each side
# that many times, alternating, and shows medians; OUT (default
# /tmp/meshd-bench/<tree>/<n>x<m>) keeps the raw outputs; BIN (default
# /tmp/meshd-bench/<tree>/bin) the binaries, the base's in BIN/base, where
# <tree> is a checksum of this tree's path, so that two checkouts running
# at once do not overwrite each other's binaries; BASE (unset)
# the revision to compare this tree with; DRYRUN=1 prints each build and
# run instead of doing it (bench/table's tests read it). The comparison workloads are Go
# modules of their own, outside the workspace (GOWORK=off); the first
# build of bench/istio-krt downloads and compiles Istio (minutes).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
rounds="${ROUNDS:-1}" only="${ONLY:-}" base="${BASE:-}" dry="${DRYRUN:-}"
case "$only" in "" | krt | xds) ;; *) echo "compare.sh: ONLY=$only: want krt or xds" >&2; exit 2 ;; esac
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "compare.sh: ROUNDS=$rounds: want a count of 1 or more" >&2; exit 2; }
if [ -n "$base" ]; then
	base_commit="$(git -C "$root" rev-parse --verify --quiet "$base^{commit}")" ||
		{ echo "compare.sh: BASE=$base: not a revision of $root" >&2; exit 2; }
fi

krt=() ourskrt=() floor=() xds=() gcp=() oursxds=()
n=1000 m=10000 p=100 changes=20
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
	a="${args[i]}"
	name="${a#-}" name="${name#-}" name="${name%%=*}"
	if [[ "$a" == *=* ]]; then
		val="${a#*=}"
	elif [ "$name" = mesh-change ]; then
		val=true
	else
		[ $((i + 1)) -lt ${#args[@]} ] || { echo "compare.sh: $a needs a value" >&2; exit 2; }
		i=$((i + 1)) val="${args[i]}"
	fi
	f=("-$name" "$val")
	case "$name" in
	n) n="$val" krt+=("${f[@]}") floor+=("${f[@]}") xds+=("${f[@]}") ;;
	m) m="$val" krt+=("${f[@]}") floor+=("${f[@]}") xds+=("${f[@]}") ;;
	latency-changes | churn-changes | probe-changes | svc-lookup | build) krt+=("${f[@]}") ;;
	mesh-change) krt+=("-$name=$val") ;;
	p) p="$val" xds+=("${f[@]}") ;;
	changes) changes="$val" ;;
	quiet) xds+=("${f[@]}") ;;
	versions) gcp+=("${f[@]}") ;;
	debounce) oursxds+=("${f[@]}") ;;
	handler-delivery) ourskrt+=("${f[@]}") ;;
	timeout | seed) krt+=("${f[@]}") xds+=("${f[@]}") ;;
	*) echo "compare.sh: unknown flag $a (see the comment at the top of $0)" >&2; exit 2 ;;
	esac
done
xds+=(-changes "$changes")
tree="$(printf '%s' "$root" | cksum | cut -d' ' -f1)"
out="${OUT:-/tmp/meshd-bench/$tree/${n}x${m}}"
bin="${BIN:-/tmp/meshd-bench/$tree/bin}"
mkdir -p "$out" "$bin"

# build DIR OUT PKG [off]: go build PKG in DIR into OUT, outside the
# workspace with off.
build() {
	if [ -n "$dry" ]; then
		echo "build $2 <- $1 $3${4:+ GOWORK=off}"
		return
	fi
	(cd "$1" && if [ -n "${4:-}" ]; then GOWORK=off go build -o "$2" "$3"; else go build -o "$2" "$3"; fi)
}

# buildMeshd DIR OUT: meshd's own benchmarks, of the tree at DIR, into OUT.
buildMeshd() {
	if [ "$only" != xds ]; then build "$1" "$2/krt-bench" ./bench/krt; fi
	if [ "$only" != krt ]; then build "$1" "$2/xdsbench" ./xds/internal/bench; fi
}

# checkoutBase checks BASE out in a temporary worktree, removed on exit.
checkoutBase() {
	if [ -n "$dry" ]; then
		echo "worktree $base_commit"
		basetree="<worktree of $base>"
		return
	fi
	basetree="$(mktemp -d "${TMPDIR:-/tmp}/meshd-base.XXXXXX")"
	trap 'git -C "$root" worktree remove --force "$basetree" >/dev/null 2>&1 || rm -rf "$basetree"' EXIT
	git -C "$root" worktree add --detach --quiet "$basetree" "$base_commit"
}

echo "building in $root ..." >&2
build "$root" "$bin/table" ./bench/table
if [ -n "$base" ]; then
	checkoutBase
	echo "building $base ($base_commit) in $basetree ..." >&2
	mkdir -p "$bin/base"
	buildMeshd "$basetree" "$bin/base"
	buildMeshd "$root" "$bin"
else
	buildMeshd "$root" "$bin"
	if [ "$only" != xds ]; then
		echo "building bench/istio-krt (the first build compiles Istio: minutes) ..." >&2
		build "$root/bench/istio-krt" "$bin/istio-krt" . off
		build "$root/bench/limit" "$bin/limit" . off
	fi
	if [ "$only" != krt ]; then build "$root/bench/gcp-snapshot" "$bin/gcp-snapshot" . off; fi
fi

# run NAME ROUND CMD...: one run, its output kept in $out/NAME-ROUND.txt.
# A failed run (a timeout, a failed check) is reported and left out of the
# medians rather than ending the comparison.
declare -A ok
run() {
	local name="$1" r="$2"
	shift 2
	if [ -n "$dry" ]; then
		echo "run $name-$r: $*"
		return
	fi
	echo "$(date +%T) round $r/$rounds: $name ..." >&2
	if "$@" >"$out/$name-$r.txt" 2>"$out/$name-$r.err"; then
		ok[$name]+="$out/$name-$r.txt,"
	else
		echo "  $name failed: $(tail -1 "$out/$name-$r.err")" >&2
	fi
}
load() { cut -d' ' -f1-3 /proc/loadavg; }
commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git -C "$root" status --porcelain 2>/dev/null)" ]; then commit+="+changes"; fi
context() { # title, load before
	echo "### $1"
	echo
	echo "$(date -u '+%F %H:%M') UTC, commit $commit, $(nproc) CPUs, GOMAXPROCS ${GOMAXPROCS:-default}," \
		"$rounds round(s); load average (1, 5, 15 min) $2 before, $(load) after."
	echo
}

# table ARGS...: bench/table over the runs that passed.
table() {
	if [ -n "$dry" ]; then
		echo "table $*"
		return
	fi
	"$bin/table" "$@"
}

# compareBase runs the base's benchmarks and this tree's alternately and
# prints them side by side.
compareBase() {
	local what="$base ($(git -C "$root" rev-parse --short "$base_commit")) against $commit"
	if [ "$only" != xds ]; then
		before="$(load)"
		for ((r = 1; r <= rounds; r++)); do
			run base "$r" "$bin/base/krt-bench" "${krt[@]}" "${ourskrt[@]}"
			run current "$r" "$bin/krt-bench" "${krt[@]}" "${ourskrt[@]}"
		done
		[ -n "$dry" ] || context "krt workload, $what: n=$n services, m=$m pods" "$before"
		table -layout krt-ab -run "base=${ok[base]:-}" -run "current=${ok[current]:-}"
		echo
	fi
	if [ "$only" != krt ]; then
		before="$(load)"
		for ((r = 1; r <= rounds; r++)); do
			run base-sotw "$r" "$bin/base/xdsbench" "${xds[@]}" "${oursxds[@]}"
			run sotw "$r" "$bin/xdsbench" "${xds[@]}" "${oursxds[@]}"
			run base-delta "$r" "$bin/base/xdsbench" "${xds[@]}" "${oursxds[@]}" -delta
			run delta "$r" "$bin/xdsbench" "${xds[@]}" "${oursxds[@]}" -delta
		done
		[ -n "$dry" ] || context "xDS, $what: n=$n services, m=$m pods, p=$p wildcard clients, $changes changes" "$before"
		table -layout xds-ab -run "base-sotw=${ok[base-sotw]:-}" -run "sotw=${ok[sotw]:-}" \
			-run "base-delta=${ok[base-delta]:-}" -run "delta=${ok[delta]:-}"
		echo
	fi
}

if [ -n "$base" ]; then
	compareBase
	echo "outputs: $out" >&2
	exit 0
fi
if [ "$only" != xds ]; then
	before="$(load)"
	for ((r = 1; r <= rounds; r++)); do
		run istio "$r" "$bin/istio-krt" "${krt[@]}"
		run meshd "$r" "$bin/krt-bench" "${krt[@]}" "${ourskrt[@]}"
		run floor "$r" "$bin/limit" "${floor[@]}"
	done
	[ -n "$dry" ] || context "krt workload: n=$n services, m=$m pods" "$before"
	table -layout krt -run "meshd=${ok[meshd]:-}" -run "istio=${ok[istio]:-}" -run "floor=${ok[floor]:-}"
	echo
fi
if [ "$only" != krt ]; then
	before="$(load)"
	for ((r = 1; r <= rounds; r++)); do
		run sotw "$r" "$bin/xdsbench" "${xds[@]}" "${oursxds[@]}"
		run delta "$r" "$bin/xdsbench" "${xds[@]}" "${oursxds[@]}" -delta
		run gcp "$r" "$bin/gcp-snapshot" -client "$bin/xdsbench" "${xds[@]}" "${gcp[@]}"
	done
	[ -n "$dry" ] || context "xDS: n=$n services, m=$m pods, p=$p wildcard clients, $changes changes" "$before"
	table -layout xds -run "sotw=${ok[sotw]:-}" -run "delta=${ok[delta]:-}" -run "gcp=${ok[gcp]:-}"
	echo
fi
echo "outputs: $out" >&2
