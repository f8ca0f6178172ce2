#!/usr/bin/env bash
# kube-testenv.sh: a real kube-apiserver + etcd for meshd's integration tests.
#
# Nothing is downloaded as a binary: both programs are compiled from the Go
# module proxy inside a cache directory, in throwaway build modules that never
# touch meshd's own go.mod.
#
#   .ci/kube-testenv.sh build   compile kube-apiserver and etcd into $MESHD_KUBE_BIN
#                               (skips whatever is already there; a cold build
#                               takes several minutes and ~2.5 GB of RAM)
#   .ci/kube-testenv.sh path    print the binary directory
#
# The Go tests (sources/kube/kubetest) start and stop the processes themselves;
# they look for the binaries in $MESHD_KUBE_BIN and, when they are absent, run
# this script to build them (with -short they skip instead). One build runs at a
# time: the script and the tests take the lock $MESHD_KUBE_CACHE/build.lock.
#
# Env:
#   MESHD_KUBE_CACHE  cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/meshd-kube)
#   MESHD_KUBE_BIN    where binaries go (default $MESHD_KUBE_CACHE/bin)
#   MESHD_KUBE_LOCK_HELD  set by a caller that holds the lock already
set -euo pipefail

KUBE_VERSION=v1.37.2   # k8s.io/kubernetes; its staging modules are v0.37.2, like our client-go
STAGING_VERSION=v0.37.2
ETCD_VERSION=v3.7.3    # go.etcd.io/etcd/server/v3

CACHE=${MESHD_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/meshd-kube}
BIN=${MESHD_KUBE_BIN:-$CACHE/bin}
export GOFLAGS=-mod=mod
export GOTOOLCHAIN=local

log() { printf '[kube-testenv] %s\n' "$*" >&2; }

# lock_build waits for any other build of this cache to end (flock(1), from
# util-linux; without it, no lock is taken).
lock_build() {
  if [ -n "${MESHD_KUBE_LOCK_HELD:-}" ] || ! command -v flock >/dev/null; then return; fi
  exec 9>"$CACHE/build.lock"
  if ! flock -n 9; then
    log "waiting for another build to finish (lock $CACHE/build.lock)"
    flock 9
  fi
}

# k8s.io/kubernetes requires its staging repositories as v0.0.0 and resolves
# them with replace directives pointing into its own tree. A consumer module
# has to replace them with the published versions; the list is read from
# k8s.io/kubernetes' go.mod so it cannot drift from the pinned release.
staging_replaces() {
  local gomod
  gomod=$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')
  [ -f "$gomod" ] || { log "cannot find go.mod of k8s.io/kubernetes@$KUBE_VERSION"; exit 1; }
  awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" { print $1 }' "$gomod" | sort -u |
    while read -r m; do printf '\t%s => %s %s\n' "$m" "$m" "$STAGING_VERSION"; done
}

build_apiserver() {
  if [ -x "$BIN/kube-apiserver" ]; then log "kube-apiserver present, skipping"; return; fi
  local dir=$CACHE/build-apiserver
  mkdir -p "$dir"
  if ! grep -q "k8s.io/kubernetes $KUBE_VERSION" "$dir/go.mod" 2>/dev/null; then
    log "preparing build module for kube-apiserver $KUBE_VERSION"
    {
      printf 'module meshd.local/kube-apiserver-build\n\ngo 1.26.0\n\nreplace (\n'
      staging_replaces
      printf ')\n'
    } > "$dir/go.mod"
    (cd "$dir" && go get "k8s.io/kubernetes/cmd/kube-apiserver@$KUBE_VERSION")
  fi
  local v=k8s.io/component-base/version
  log "compiling kube-apiserver (slow when cold)"
  local start=$SECONDS
  (cd "$dir" && go build -trimpath -o "$BIN/kube-apiserver.tmp" \
    -ldflags "-s -w -X $v.gitVersion=$KUBE_VERSION -X $v.gitMajor=1 -X $v.gitMinor=37 -X $v.gitTreeState=clean" \
    k8s.io/kubernetes/cmd/kube-apiserver)
  mv "$BIN/kube-apiserver.tmp" "$BIN/kube-apiserver"
  log "kube-apiserver built in $((SECONDS - start))s"
}

build_etcd() {
  if [ -x "$BIN/etcd" ]; then log "etcd present, skipping"; return; fi
  local dir=$CACHE/build-etcd
  mkdir -p "$dir"
  if ! grep -q "go.etcd.io/etcd/server/v3 $ETCD_VERSION" "$dir/go.mod" 2>/dev/null; then
    log "preparing build module for etcd $ETCD_VERSION"
    printf 'module meshd.local/etcd-build\n\ngo 1.26.0\n' > "$dir/go.mod"
    (cd "$dir" && go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION")
  fi
  log "compiling etcd"
  local start=$SECONDS
  (cd "$dir" && go build -trimpath -ldflags '-s -w' -o "$BIN/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$BIN/etcd.tmp" "$BIN/etcd"
  log "etcd built in $((SECONDS - start))s"
}

case ${1:-} in
  build)
    mkdir -p "$BIN" "$CACHE"
    lock_build
    build_etcd
    build_apiserver
    "$BIN/kube-apiserver" --version
    "$BIN/etcd" --version | head -n 1
    ;;
  path) echo "$BIN" ;;
  *) echo "usage: $0 build|path" >&2; exit 2 ;;
esac
