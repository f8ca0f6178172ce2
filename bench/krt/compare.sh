#!/usr/bin/env bash
# compare.sh runs the pods/services workload on Istio's krt (the anchor) and
# on ours, back to back, ROUNDS times, and prints a Markdown table of the
# medians with ratios and targets.
#
#   bench/krt/compare.sh                    # n=1000, m=10000
#   ROUNDS=3 bench/krt/compare.sh -n 5000 -m 50000
#
# Flags are passed to both commands (use the ones they share). Outputs are
# kept in $OUT (default /tmp/krt-bench/<n>x<m>); the anchor is built once
# into $BIN (its first build downloads and compiles Istio: minutes).
#
# The anchor has no mesh-config phase and no CPU-time figures;
# anchor-extras.patch adds both
# (the same phase as ours: a new trust domain, timed until a Workloads
# handler has seen every workload updated). It is applied to a copy of the
# anchor, never to the anchor itself; ANCHOR_MESH=0 runs the anchor as is.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
anchor="${ANCHOR_DIR:-$root/../shared/anchors/istio-krt}"
[ -d "$anchor" ] || anchor=/work/shared/anchors/istio-krt
rounds="${ROUNDS:-1}"
bin="${BIN:-/tmp/krt-bench/bin}"

n=1000 m=10000
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
	case "${args[i]}" in
	-n) n="${args[i+1]}" ;;
	-m) m="${args[i+1]}" ;;
	esac
done
out="${OUT:-/tmp/krt-bench/${n}x${m}}"
mkdir -p "$bin" "$out"

here="$(cd "$(dirname "$0")" && pwd)"
if [ "${ANCHOR_MESH:-1}" = 1 ]; then
	src="$bin/anchor-src" abin="$bin/istio-krt-bench-mesh"
	if [ ! -x "$abin" ] || [ "$anchor/main.go" -nt "$abin" ] || [ "$here/anchor-extras.patch" -nt "$abin" ]; then
		echo "building the Istio anchor (with the mesh-config phase) from $anchor ..." >&2
		rm -rf "$src" && mkdir -p "$src"
		cp "$anchor/go.mod" "$anchor/go.sum" "$anchor/main.go" "$src/"
		(cd "$src" && patch -s main.go <"$here/anchor-extras.patch" && go build -o "$abin" .)
	fi
else
	abin="$bin/istio-krt-bench"
	if [ ! -x "$abin" ] || [ "$anchor/main.go" -nt "$abin" ]; then
		echo "building the Istio anchor in $anchor ..." >&2
		(cd "$anchor" && go build -o "$abin" .)
	fi
fi
(cd "$root" && go build -o "$bin/krt-bench" ./bench/krt)

ours=() istio=()
for ((r = 1; r <= rounds; r++)); do
	# A failed run (a timeout, a verification failure) is reported and left
	# out of the medians rather than ending the comparison.
	echo "round $r/$rounds: Istio krt ..." >&2
	if "$abin" "$@" >"$out/istio-$r.txt" 2>"$out/istio-$r.err"; then
		istio+=("$out/istio-$r.txt")
	else
		echo "  Istio run failed: $(tail -1 "$out/istio-$r.err")" >&2
	fi
	echo "round $r/$rounds: ours ..." >&2
	if "$bin/krt-bench" "$@" >"$out/ours-$r.txt" 2>"$out/ours-$r.err"; then
		ours+=("$out/ours-$r.txt")
	else
		echo "  our run failed: $(tail -1 "$out/ours-$r.err")" >&2
	fi
done
if [ ${#ours[@]} -eq 0 ] || [ ${#istio[@]} -eq 0 ]; then
	echo "no successful run on one side; outputs: $out" >&2
	exit 1
fi
join() { local IFS=,; echo "$*"; }
"$bin/krt-bench" -compare -ours "$(join "${ours[@]}")" -istio "$(join "${istio[@]}")"
echo "outputs: $out" >&2
