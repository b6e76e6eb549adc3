#!/usr/bin/env bash
# One seed, one trace hash, for etcd-raft: a scenario run twice gives the same
# hash, and its repro replays to it (electsim replay exits 1 on a mismatch).
# Usage: check-replay.sh ELECTSIM SCENARIO
set -euo pipefail
electsim=${1:?usage: check-replay.sh ELECTSIM SCENARIO}
scenario=${2:?usage: check-replay.sh ELECTSIM SCENARIO}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
hash_of() { grep -o 'trace-hash: 0x[0-9a-f]*' <<<"$1" | head -n 1; }
first=$("$electsim" run "$scenario" --seed 7 --repro-dir "$dir" --repro-on violation)
second=$("$electsim" run "$scenario" --seed 7 --repro-dir "")
other=$("$electsim" run "$scenario" --seed 8 --repro-dir "")
[ -n "$(hash_of "$first")" ] || { echo "no trace hash in: $first" >&2; exit 1; }
[ "$(hash_of "$first")" = "$(hash_of "$second")" ] || { echo "run twice: $(hash_of "$first") then $(hash_of "$second")" >&2; exit 1; }
[ "$(hash_of "$first")" != "$(hash_of "$other")" ] || { echo "seeds 7 and 8 gave one hash: the seed reaches nothing" >&2; exit 1; }
replayed=$("$electsim" replay "$dir"/*.repro.json)
grep -q "trace hash matches the repro ($(hash_of "$first" | cut -d' ' -f2))" <<<"$replayed" ||
  { echo "replay: $replayed" >&2; exit 1; }
echo "etcd-raft: $(hash_of "$first") run twice and replayed"
