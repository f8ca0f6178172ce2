#!/usr/bin/env bash
# compare.sh builds meshd's benchmarks and the comparison workloads under
# bench/ (Istio's krt, the plain-map floor, go-control-plane's snapshot
# cache), runs ours and theirs back to back on this machine, and prints
# Markdown tables of the figures side by side, with ratios.
#
#   bench/compare.sh                                   # both, n=1000 m=10000 p=100
#   bench/compare.sh -n 100 -m 1000 -p 10 -changes 50
#   ONLY=krt ROUNDS=3 bench/compare.sh -n 5000 -m 50000
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
#   -timeout -seed          all but the floor
# Environment: ONLY=krt|xds runs one comparison; ROUNDS (1) runs each side
# that many times, alternating, and shows medians; OUT (default
# /tmp/meshd-bench/<n>x<m>) keeps the raw outputs; BIN (default
# /tmp/meshd-bench/bin) the binaries. The comparison workloads are Go
# modules of their own, outside the workspace (GOWORK=off); the first
# build of bench/istio-krt downloads and compiles Istio (minutes).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
rounds="${ROUNDS:-1}" only="${ONLY:-}"

krt=() floor=() xds=() gcp=() oursxds=()
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
	timeout | seed) krt+=("${f[@]}") xds+=("${f[@]}") ;;
	*) echo "compare.sh: unknown flag $a (see the comment at the top of $0)" >&2; exit 2 ;;
	esac
done
xds+=(-changes "$changes")
out="${OUT:-/tmp/meshd-bench/${n}x${m}}"
bin="${BIN:-/tmp/meshd-bench/bin}"
mkdir -p "$out" "$bin"

echo "building in $root ..." >&2
(cd "$root" && go build -o "$bin/table" ./bench/table)
if [ "$only" != xds ]; then
	(cd "$root" && go build -o "$bin/krt-bench" ./bench/krt)
	echo "building bench/istio-krt (the first build compiles Istio: minutes) ..." >&2
	(cd "$root/bench/istio-krt" && GOWORK=off go build -o "$bin/istio-krt" .)
	(cd "$root/bench/limit" && GOWORK=off go build -o "$bin/limit" .)
fi
if [ "$only" != krt ]; then
	(cd "$root" && go build -o "$bin/xdsbench" ./xds/internal/bench)
	(cd "$root/bench/gcp-snapshot" && GOWORK=off go build -o "$bin/gcp-snapshot" .)
fi

# run NAME ROUND CMD...: one run, its output kept in $out/NAME-ROUND.txt.
# A failed run (a timeout, a failed check) is reported and left out of the
# medians rather than ending the comparison.
declare -A ok
run() {
	local name="$1" r="$2"
	shift 2
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

if [ "$only" != xds ]; then
	before="$(load)"
	for ((r = 1; r <= rounds; r++)); do
		run istio "$r" "$bin/istio-krt" "${krt[@]}"
		run meshd "$r" "$bin/krt-bench" "${krt[@]}"
		run floor "$r" "$bin/limit" "${floor[@]}"
	done
	context "krt workload: n=$n services, m=$m pods" "$before"
	"$bin/table" -layout krt -run "meshd=${ok[meshd]:-}" -run "istio=${ok[istio]:-}" -run "floor=${ok[floor]:-}"
	echo
fi
if [ "$only" != krt ]; then
	before="$(load)"
	for ((r = 1; r <= rounds; r++)); do
		run sotw "$r" "$bin/xdsbench" "${xds[@]}" "${oursxds[@]}"
		run delta "$r" "$bin/xdsbench" "${xds[@]}" "${oursxds[@]}" -delta
		run gcp "$r" "$bin/gcp-snapshot" -client "$bin/xdsbench" "${xds[@]}" "${gcp[@]}"
	done
	context "xDS: n=$n services, m=$m pods, p=$p wildcard clients, $changes changes" "$before"
	"$bin/table" -layout xds -run "sotw=${ok[sotw]:-}" -run "delta=${ok[delta]:-}" -run "gcp=${ok[gcp]:-}"
	echo
fi
echo "outputs: $out" >&2
