#!/usr/bin/env bash
# tools/revision.cmake, which every build runs: the unit it writes names the
# revision git describes now, is left alone (not even touched) while that
# stays the same, follows a new commit and a dirty tree, and says so where
# there is no git history.
# Usage: revision_test.sh REVISION_CMAKE
set -euo pipefail
script=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unit=$work/out/revision.cc
mkdir -p "$work/out" "$work/src"
generate() { cmake -DSOURCE_DIR="$1" -DOUTPUT="$unit" -DGIT_EXECUTABLE="$(command -v git)" -P "$script"; }
named() { grep -q "return \"$1\";" "$unit" || fail "expected revision '$1' in: $(cat "$unit")"; }

cd "$work/src"
git init -q . && git config user.email t@example.com && git config user.name t
echo a >file && git add file && git commit -qm one
generate "$work/src"
named "$(git describe --always --dirty --tags)"
touch -d '2000-01-01' "$unit"
before=$(stat -c %Y "$unit")
generate "$work/src"
[[ $(stat -c %Y "$unit") == "$before" ]] || fail "the same revision rewrote the unit (a rebuild of it for nothing)"

echo b >file && git commit -qam two
generate "$work/src"
named "$(git rev-parse --short HEAD)"
echo c >file
generate "$work/src"
named "$(git rev-parse --short HEAD)-dirty"

mkdir "$work/plain"
generate "$work/plain"
named "unknown, built without git history"
echo "revision_test: ok"
