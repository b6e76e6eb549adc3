#!/usr/bin/env bash
# Builds the etcd-raft step-protocol node against Debian's packaged Go sources
# (golang-go, golang-etcd-server-dev): GOPATH mode, no module downloads.
# Usage: build-node.sh OUT_BINARY CACHE_DIR
#        build-node.sh --test CACHE_DIR   (runs the node's Go tests instead)
set -euo pipefail
usage="usage: build-node.sh OUT_BINARY|--test CACHE_DIR"
out=${1:?$usage}
cache=${2:?$usage}
here=$(cd "$(dirname "$0")" && pwd)

if ! command -v go >/dev/null || [[ ! -d /usr/share/gocode/src/go.etcd.io/etcd/raft ]]; then
  echo "build-node.sh: needs Go and etcd's raft sources: apt-get install golang-go golang-etcd-server-dev" >&2
  exit 1
fi

mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
if [[ $out != --test ]]; then
  mkdir -p "$(dirname "$out")"
  out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
fi

# GOPATH mode wants the package under $GOPATH/src; a fresh copy each time so
# a file removed here does not linger there.
src=$cache/gopath/src/electsim-etcd-raft
rm -rf "$src"
mkdir -p "$src"
cp "$here"/*.go "$src"/

# Go's own build cache (GOCACHE, else its default under the home folder) is
# shared by every build tree: the Release and sanitizer builds of tools/test
# compile etcd's raft packages once, not twice (16 s of a slow host's 2 cores).
# Its entries are content-addressed, so a shared cache gives the same binary.
# Without a usable default, the cache stays in CACHE_DIR.
gocache=$(go env GOCACHE 2>/dev/null || true)
if [[ -z $gocache || $gocache == off ]] || ! mkdir -p "$gocache" 2>/dev/null; then
  gocache=$cache/gocache
fi

cd "$src"
export GO111MODULE=off GOPATH="$cache/gopath:/usr/share/gocode" GOCACHE="$gocache" GOFLAGS=-trimpath
if [[ $out == --test ]]; then
  exec go test .
fi
go build -o "$out" .
