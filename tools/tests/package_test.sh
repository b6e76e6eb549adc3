#!/usr/bin/env bash
# The package as a user gets it: install the build to a temporary prefix,
# build examples/zookeeper-election against it as a separate CMake project
# and run its tests (its scenarios, sweeps of them, the herd test); then
# make the .deb, unpack it with dpkg -x and run the packaged CLI.
# Usage: package_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
source_dir=$(realpath "$1")
build_dir=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== install to $work/prefix"
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/lib/cmake/electsim/electsimConfig.cmake"
test -f "$work/prefix/include/electsim/electsim.h"
test -f "$work/prefix/share/electsim/schema/scenario.schema.json"

echo "== the ZooKeeper example, built against the installed package"
cmake -S "$source_dir/examples/zookeeper-election" -B "$work/zk" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/zk" -j2 >/dev/null
ctest --test-dir "$work/zk" -j2 --output-on-failure
# Listed like a built-in algorithm (output captured first: grep -q would cut the pipe).
listing=$("$work/zk/zk-electsim" list)
grep -q '^  zookeeper (uses a store): ' <<<"$listing"
grep -q '^  raft: ' <<<"$listing"
"$work/zk/zk-electsim" --version

echo "== the .deb"
cpack --config "$build_dir/CPackConfig.cmake" -B "$work/deb" >/dev/null
deb=$(ls "$work"/deb/electsim_*.deb)
dpkg-deb --info "$deb" | grep -E 'Package|Version|Depends'
dpkg -x "$deb" "$work/unpacked"
"$work/unpacked/usr/bin/electsim" --version
listing=$("$work/unpacked/usr/bin/electsim" list)
grep -q '^  raft: ' <<<"$listing"
test -f "$work/unpacked/usr/lib/cmake/electsim/electsimConfig.cmake"
echo "package test: passed"
