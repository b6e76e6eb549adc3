#!/usr/bin/env python3
"""Checks that the conformance kit can fail.

    python3 selftest.py

Runs the kit on the reference client (every case must pass), then on broken
copies of it, each made by small text substitutions in a temporary
directory, and demands that each is caught by the case that should catch it,
for the reason it should. Exits 1 when the reference fails or a broken copy
passes; 2 when a substitution no longer applies (the client changed: update
the variant).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KIT = os.path.join(HERE, "conformance.py")
CLIENT = os.path.join(HERE, "python")
BUDGET_MS = 3000  # a broken copy that hangs fails in this long, not in the manifest's 10 s

# (name, case that must fail, text its failure must contain, [(old, new), ...])
VARIANTS = [
    ("hello of protocol 2", "hello", "first line",
     [('b\'{"type":"hello","protocol":1}\\n\'', 'b\'{"type":"hello","protocol":2}\\n\'')]),
    ("timer delays as floats", "framing", "not a 64-bit integer",
     [('"delay": delay}', '"delay": delay / 1}')]),
    ("seeded from the clock", "determinism", "differs",
     [('SplitMix64(event["seed"])', 'SplitMix64(__import__("time").time_ns())')]),
    ("no done for unknown events", "unknown-members", "step budget",
     [("        if handler is not None:\n            handler(event)\n",
       "        if handler is None:\n            continue\n        handler(event)\n")]),
    ("forgets its term on restart", "restart", "term_monotonic",
     [("self.term = stored_term or 0", "self.term = 0")]),
    ("never syncs", "power-loss", "term_monotonic",
     [('self.emit({"type": "sync"})', "pass")]),
    # Fixed timeouts make every node campaign at once, so the bug shows on any seed.
    ("votes twice in a term", "election", "single_vote",
     [("granted = self.voted_for in (NOBODY, sender)", "granted = True"),
      ("self.rng.between(self.timeout_min, self.timeout_max)", "self.timeout_min")]),
    ("counts refused votes: two leaders per term", "election", "election_safety",
     [('if self.role == CANDIDATE and msg.get("granted", 0):', "if self.role == CANDIDATE:"),
      ("self.rng.between(self.timeout_min, self.timeout_max)", "self.timeout_min")]),
    ("keeps a prepared write when stepping down", "leader-work", "stepping down abandons a write",
     [("for timer in (HEARTBEAT, WORK_TICK, WORK_SEND):", "for timer in (HEARTBEAT, WORK_TICK):")]),
    ("no leader write at election", "leader-work", "at election",
     [("self.set_timer(WORK_TICK, 0)", "self.set_timer(WORK_TICK, self.write_interval)")]),
    ("exits 1 at end of file", "eof", "status 1",
     [("    return 0\n", "    return 1\n")]),
]


def make_variant(root, substitutions):
    """A copy of the client with `substitutions` applied, and its manifest's path."""
    shutil.copytree(CLIENT, root)
    source = os.path.join(root, "election_node.py")
    with open(source) as f:
        text = f.read()
    for old, new in substitutions:
        if text.count(old) != 1:
            raise LookupError(f"{old!r} occurs {text.count(old)} times in election_node.py, not once")
        text = text.replace(old, new)
    with open(source, "w") as f:
        f.write(text)
    manifest = os.path.join(root, "manifest.json")
    with open(manifest) as f:
        doc = json.load(f)
    doc["step_budget_ms"] = BUDGET_MS
    with open(manifest, "w") as f:
        json.dump(doc, f, indent=2)
    return manifest


def start_kit(manifest, case=None):
    command = [sys.executable, KIT, "--manifest", manifest] + (["--case", case] if case else [])
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def run_all(jobs):
    """Runs (manifest, case) kit jobs, as many at once as there are CPUs: more
    would starve the kit's processes of the step budget. Returns each one's
    (exit status, output), in order."""
    results, running, waiting = [None] * len(jobs), {}, list(enumerate(jobs))
    while waiting or running:
        while waiting and len(running) < (os.cpu_count() or 1):
            i, (manifest, case) = waiting.pop(0)
            running[i] = start_kit(manifest, case)
        i, run = next(iter(running.items()))
        output, _ = run.communicate()
        results[i] = (run.returncode, output)
        del running[i]
    return results


def main():
    began = time.monotonic()
    failures = 0
    with tempfile.TemporaryDirectory(prefix="step-protocol-selftest-") as tmp:
        jobs = [(os.path.join(CLIENT, "manifest.json"), None)]
        for i, (name, case, reason, substitutions) in enumerate(VARIANTS):
            try:
                jobs.append((make_variant(os.path.join(tmp, f"variant{i}"), substitutions), case))
            except LookupError as e:
                print(f"selftest: variant {name!r}: {e}", file=sys.stderr)
                return 2
        (status, output), *variants = run_all(jobs)
        if status != 0:
            print(f"FAIL reference client: the kit exited {status}:\n{output}")
            failures += 1
        else:
            print("ok  reference client passes every case")
        for (name, case, reason, _), (status, output) in zip(VARIANTS, variants):
            line = next((l for l in output.splitlines() if l.startswith(f"FAIL {case}:")), None)
            if status == 1 and line is not None and reason in line:
                print(f"ok  caught {name!r}: {line}")
            else:
                print(f"FAIL not caught as expected {name!r} (case {case}, expected {reason!r}; "
                      f"kit exit {status}):\n{output}")
                failures += 1
    print(f"selftest: reference and {len(VARIANTS)} broken variants, {failures} problem(s), "
          f"{time.monotonic() - began:.1f}s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
