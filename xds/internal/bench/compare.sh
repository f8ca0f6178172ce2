#!/usr/bin/env bash
# compare.sh runs the xDS workload at one scale on meshd and on
# go-control-plane's SnapshotCache (the anchor in
# /work/shared/anchors/xds/gcp-snapshot), back to back, and prints a
# Markdown table of the figures that answer "what does one pod change
# cost?".
#
#   xds/internal/bench/compare.sh                      # the issue's scale
#   N=1000 M=10000 P=100 xds/internal/bench/compare.sh # a quicker one
#
# Runs, all with N services and M pods:
#   named   P clients, each asking by name for K services (like gRPC
#           proxyless clients dialing them), Delta and SotW; the Delta run
#           also handles every change with a full go-control-plane snapshot
#           in the same process (-snapshot), a lower bound of that cost
#   wild    WP clients that want everything (the anchors' clients), Delta
#           and SotW, and the go-control-plane anchor with the same clients
# Defaults: N=10000 M=100000 P=1000 K=100 WP=100; CHANGES (30) per meshd
# run, GCP_CHANGES (3) for the anchor, whose changes take seconds each.
# Outputs are kept in $OUT (default /tmp/xds-bench/<N>x<M>).
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
anchor="${ANCHOR_DIR:-$root/../shared/anchors/xds/gcp-snapshot}"
[ -d "$anchor" ] || anchor=/work/shared/anchors/xds/gcp-snapshot
N="${N:-10000}" M="${M:-100000}" P="${P:-1000}" K="${K:-100}" WP="${WP:-100}"
CHANGES="${CHANGES:-30}" GCP_CHANGES="${GCP_CHANGES:-3}"
out="${OUT:-/tmp/xds-bench/${N}x${M}}"
bin="${BIN:-/tmp/xds-bench/bin}"
mkdir -p "$out" "$bin"

(cd "$root" && go build -o "$bin/xdsbench" ./xds/internal/bench)
if [ -d "$anchor" ]; then
	(cd "$anchor" && go build -o "$bin/gcpsnap" .)
fi

run() { # name, command...
	local name="$1"
	shift
	echo "$(date +%T) $name ..." >&2
	if ! "$@" >"$out/$name.txt" 2>"$out/$name.err"; then
		echo "  $name failed: $(tail -1 "$out/$name.err")" >&2
		: >"$out/$name.txt"
	fi
}
common=(-n "$N" -m "$M" -timeout 30m)
run named-delta "$bin/xdsbench" "${common[@]}" -p "$P" -subscribe "$K" -changes "$CHANGES" -delta -snapshot
run named-sotw "$bin/xdsbench" "${common[@]}" -p "$P" -subscribe "$K" -changes "$CHANGES"
run wild-delta "$bin/xdsbench" "${common[@]}" -p "$WP" -changes "$CHANGES" -delta
run wild-sotw "$bin/xdsbench" "${common[@]}" -p "$WP" -changes "$CHANGES"
if [ -x "$bin/gcpsnap" ]; then
	run wild-gcp "$bin/gcpsnap" -n "$N" -m "$M" -p "$WP" -changes "$GCP_CHANGES"
fi

get() { # file, metric -> value or "-"
	awk -v m="$2" '$1 == m { v = $2 } END { print (v == "" ? "-" : v) }' "$out/$1.txt"
}
fmt() { # value, printf format
	[ "$1" = "-" ] && { echo "-"; return; }
	printf "$2" "$1"
}
ratio() { # a / b
	if [ "$1" = "-" ] || [ "$2" = "-" ]; then echo "-"; return; fi
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.0f×", a / b; else print "-" }'
}
row() { # label, metric, format, runs...
	local label="$1" metric="$2" f="$3"
	shift 3
	local line="| $label"
	for r in "$@"; do line+=" | $(fmt "$(get "$r" "$metric")" "$f")"; done
	echo "$line |"
}

echo
echo "n=$N services, m=$M pods, $(date -u +%F), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| $P clients asking for $K services each | meshd Delta | meshd SotW |"
echo "|---|---|---|"
row "streams a change reaches (mean)" change_streams_affected_mean "%.0f" named-delta named-sotw
row "change → every affected stream, p50 (ms)" change_latency_p50 "%.1f" named-delta named-sotw
row "change → every affected stream, p99 (ms)" change_latency_p99 "%.1f" named-delta named-sotw
row "server CPU per change, mean (ms)" change_server_cpu_mean "%.1f" named-delta named-sotw
row "server CPU per change, p50 (ms)" change_server_cpu_p50 "%.1f" named-delta named-sotw
row "bytes per affected stream per change" change_bytes_per_affected_stream_mean "%.0f" named-delta named-sotw
row "connect all clients (ms)" connect_all_clients_all_types "%.0f" named-delta named-sotw
row "server heap after connect (MiB)" server_heap_after_connect "%.0f" named-delta named-sotw
base=$(get named-delta baseline_snapshot_cpu_mean)
ours=$(get named-delta change_server_cpu_mean)
echo
echo "Same change as a full go-control-plane snapshot for all $P nodes (in process, lower bound):" \
	"$(fmt "$base" "%.0f") ms CPU per change vs $(fmt "$ours" "%.1f") ms — $(ratio "$base" "$ours") less CPU."
echo
echo "| $WP clients wanting everything | meshd Delta | meshd SotW | go-control-plane snapshot |"
echo "|---|---|---|---|"
row "change → every stream, p50 (ms)" change_latency_p50 "%.1f" wild-delta wild-sotw wild-gcp
row "change → every stream, p99 (ms)" change_latency_p99 "%.1f" wild-delta wild-sotw wild-gcp
row "server CPU per change, mean (ms)" change_server_cpu_mean "%.1f" wild-delta wild-sotw wild-gcp
row "bytes per client per change" change_bytes_per_client_mean "%.0f" wild-delta wild-sotw wild-gcp
row "connect all clients (ms)" connect_all_clients_all_types "%.0f" wild-delta wild-sotw wild-gcp
row "server CPU to connect (ms)" connect_server_cpu "%.0f" wild-delta wild-sotw wild-gcp
row "server heap after connect (MiB)" server_heap_after_connect "%.0f" wild-delta wild-sotw wild-gcp
gcp=$(get wild-gcp change_server_cpu_mean)
echo
echo "CPU per change, go-control-plane / meshd: Delta $(ratio "$gcp" "$(get wild-delta change_server_cpu_mean)")," \
	"SotW $(ratio "$gcp" "$(get wild-sotw change_server_cpu_mean)")."
echo "outputs: $out" >&2
