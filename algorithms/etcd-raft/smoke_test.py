#!/usr/bin/env python3
"""Smoke test of the etcd-raft step-protocol node, without electsim.

Runs five node processes on a tiny deterministic network of its own (every
send arrives 1ms later, in order; timers fire in virtual-time order; loads
are answered from a dict per node) and checks: one leader is elected and no
two lead one term; the same seed gives a byte-identical transcript and
another seed a different one; after the leader is killed a new one is
elected; the killed node restarted on its storage comes back as a follower
of its stored term and follows the new leader. Exits non-zero on failure.

Usage: smoke_test.py [--binary PATH] [--cache DIR]
Without --binary it builds the node with build-node.sh first.
"""
import argparse
import heapq
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MS = 1_000_000
NODES = 5
RESOURCE = NODES
LEADER_WORK = {"write_interval": 100 * MS, "write_duration": 5 * MS}


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def dumps(obj):
    return json.dumps(obj, separators=(",", ":"))


class Cluster:
    def __init__(self, binary, base_seed, options):
        self.binary = binary
        self.base_seed = base_seed
        self.options = options
        self.now = 0
        self.queue = []  # (time, seq, kind, args)
        self.seq = 0
        self.procs = [None] * NODES
        self.alive = [False] * NODES
        self.boots = [0] * NODES
        self.storage = [dict() for _ in range(NODES)]
        self.timer_gen = {}
        self.transcript = []
        # What each node last reported.
        self.role = [None] * NODES  # (role, term)
        self.belief = [None] * NODES  # (leader, term)
        self.term = [0] * NODES
        self.leaders = {}  # term -> node
        self.elected = []  # (time, node, term)
        self.commits = {}  # index -> (term, entry)
        self.writes = 0
        self.last_write = [None] * NODES  # time of each node's latest `write`
        self.logs = [[] for _ in range(NODES)]  # (term, entry) from index 1, as observed
        self.committed = [0] * NODES
        self.boot_obs = {}  # node -> observations of its latest start

    # ---- processes ----

    def seed_of(self, node, boot):
        return (self.base_seed * 1_000_003 + node * 7919 + boot * 104_729) % (1 << 64)

    def boot(self, node):
        self.boots[node] += 1
        p = subprocess.Popen([self.binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.procs[node] = p
        self.alive[node] = True
        hello = p.stdout.readline()
        self.transcript.append(b"%d > " % node + hello)
        check(hello == b'{"type":"hello","protocol":1}\n', f"node {node}: hello line {hello!r}")
        self.role[node] = None
        self.belief[node] = None
        self.boot_obs[node] = []
        self.event(node, {"type": "start", "protocol": 1, "node": node, "nodes": NODES, "resource": RESOURCE,
                          "seed": self.seed_of(node, self.boots[node]), "options": self.options,
                          "leader_work": LEADER_WORK, "mono": self.now, "wall": self.now})

    def kill(self, node):
        p = self.procs[node]
        p.kill()
        p.wait()
        self.alive[node] = False
        self.procs[node] = None

    def close_all(self):
        for node, p in enumerate(self.procs):
            if p is None:
                continue
            p.stdin.close()
            rc = p.wait(timeout=10)
            check(rc == 0, f"node {node} exited with {rc} at end of file")
            self.procs[node] = None

    # ---- one event and its effects ----

    def event(self, node, ev):
        p = self.procs[node]
        line = dumps(ev).encode() + b"\n"
        self.transcript.append(b"%d < " % node + line)
        p.stdin.write(line)
        p.stdin.flush()
        booting = ev["type"] == "start"
        while True:
            out = p.stdout.readline()
            check(out.endswith(b"\n"), f"node {node}: process ended mid-answer ({out!r})")
            self.transcript.append(b"%d > " % node + out)
            eff = json.loads(out)
            kind = eff["type"]
            if kind == "done":
                return
            if kind == "load":
                value = self.storage[node].get(eff["key"])
                answer = dumps({"type": "value", "key": eff["key"], "value": value}).encode() + b"\n"
                self.transcript.append(b"%d < " % node + answer)
                p.stdin.write(answer)
                p.stdin.flush()
            elif kind in ("write", "persist"):
                # A process crash keeps buffered writes: both land at once.
                self.storage[node][eff["key"]] = eff["value"]
            elif kind == "sync":
                pass
            elif kind == "set_timer":
                key = (node, eff["id"])
                gen = self.timer_gen.get(key, 0) + 1
                self.timer_gen[key] = gen
                self.push(self.now + eff["delay"], "timer", node, eff["id"], gen)
            elif kind == "cancel_timer":
                key = (node, eff["id"])
                self.timer_gen[key] = self.timer_gen.get(key, 0) + 1
            elif kind == "send":
                self.send(node, eff["to"], eff["msg"])
            elif kind == "observe":
                if booting:
                    self.boot_obs[node].append(eff["obs"])
                self.observe(node, eff["obs"])
            elif kind == "error":
                raise Failure(f"node {node}: error effect: {eff['message']}")
            else:
                raise Failure(f"node {node}: unknown effect {out!r}")

    def send(self, node, to, msg):
        if to == RESOURCE:
            check(msg["type"] == "resource.write", f"node {node} sent {msg} to the resource")
            ack = {"type": "resource.ack", "token": msg["token"], "seq": msg["seq"], "accepted": 1,
                   "highest": msg["token"]}
            self.push(self.now + MS, "deliver", RESOURCE, node, ack, 0, self.boots[node])
            return
        check(0 <= to < NODES and to != node, f"node {node} sent to {to}")
        self.push(self.now + MS, "deliver", node, to, msg, self.boots[node], self.boots[to])

    def observe(self, node, obs):
        t = obs["type"]
        if t == "role":
            self.role[node] = (obs["role"], obs["term"])
            if obs["role"] == 2:
                term = obs["term"]
                check(obs.get("token") == term, f"node {node}: leader token {obs.get('token')} in term {term}")
                other = self.leaders.get(term)
                check(other is None or other == node, f"nodes {other} and {node} both led term {term}")
                self.leaders[term] = node
                self.elected.append((self.now, node, term))
        elif t == "believe":
            self.belief[node] = (obs["leader"], obs["term"])
        elif t == "term":
            check(obs["term"] >= self.term[node] or self.role[node] is None,
                  f"node {node}: term went from {self.term[node]} to {obs['term']}")
            self.term[node] = obs["term"]
        elif t == "log.append":
            # An append ends the log at its index (node_logs.cc).
            del self.logs[node][obs["index"] - 1:]
            check(len(self.logs[node]) == obs["index"] - 1, f"node {node}: a gap before index {obs['index']}")
            self.logs[node].append((obs["term"], obs["entry"]))
        elif t == "log.commit":
            entry = (obs["term"], obs["entry"])
            check(self.logs[node][obs["index"] - 1] == entry,
                  f"node {node} committed {entry} at {obs['index']} but holds {self.logs[node][obs['index'] - 1]}")
            self.committed[node] = max(self.committed[node], obs["index"])
            seen = self.commits.setdefault(obs["index"], entry)
            check(seen == entry, f"index {obs['index']} committed as {seen} and as {entry} (node {node})")
        elif t == "write":
            self.writes += 1
            self.last_write[node] = self.now

    # ---- the network and the clock ----

    def push(self, t, kind, *args):
        heapq.heappush(self.queue, (t, self.seq, kind, args))
        self.seq += 1

    def run_until(self, end, stop=None):
        """Runs the events up to `end`, or until `stop()` holds after one."""
        while self.queue and self.queue[0][0] <= end:
            if stop is not None and stop():
                return
            t, _, kind, args = heapq.heappop(self.queue)
            self.now = t
            if kind == "timer":
                node, tid, gen = args
                if self.alive[node] and self.timer_gen.get((node, tid)) == gen:
                    self.event(node, {"type": "timer", "id": tid, "mono": t, "wall": t})
            else:
                frm, to, msg, from_boot, to_boot = args
                # A killed node's messages die with it, in either direction.
                if frm != RESOURCE and (not self.alive[frm] or self.boots[frm] != from_boot):
                    continue
                if not self.alive[to] or self.boots[to] != to_boot:
                    continue
                self.event(to, {"type": "message", "from": frm, "msg": msg, "mono": t, "wall": t})
        self.now = end

    # ---- views ----

    def current_leaders(self):
        return [i for i in range(NODES) if self.alive[i] and self.role[i] and self.role[i][0] == 2]


def scenario(binary, base_seed, options, log):
    c = Cluster(binary, base_seed, options)
    try:
        for i in range(NODES):
            c.boot(i)

        # Phase 1: an election.
        c.run_until(2000 * MS)
        leaders = c.current_leaders()
        check(len(leaders) == 1, f"after 2s, leaders {leaders}")
        check(len(c.elected) == 1, f"in a quiet network one election, got {c.elected}")
        first = leaders[0]
        term1 = c.role[first][1]
        for i in range(NODES):
            check(c.belief[i] == (first, term1), f"node {i} believes {c.belief[i]}, not ({first}, {term1})")
        check(c.writes > 0, "the leader wrote nothing")
        log(f"  seed {base_seed}: node {first} leads term {term1}; {c.writes} writes, "
            f"{len(c.commits)} indices committed")

        # Phase 2: the leader dies just after a write, before its entry
        # leaves: the entry it holds alone is overwritten after its return.
        c.run_until(3000 * MS, stop=lambda: c.last_write[first] == c.now)
        check(c.last_write[first] == c.now, "the leader wrote nothing after 2s")
        killed_at = c.now
        check(len(c.logs[first]) == c.committed[first] + 1, "the leader's log is not one write ahead of its commit")
        stored_term = c.storage[first].get("hs.term")
        c.kill(first)
        c.run_until(4000 * MS)
        leaders = c.current_leaders()
        check(len(leaders) == 1 and leaders[0] != first, f"after the kill, leaders {leaders}")
        second = leaders[0]
        term2 = c.role[second][1]
        check(term2 > term1, f"new leader's term {term2} not above {term1}")
        for i in range(NODES):
            if i != first:
                check(c.belief[i] == (second, term2), f"node {i} believes {c.belief[i]}, not ({second}, {term2})")
        log(f"  node {first} killed at {killed_at / MS:g}ms with {len(c.logs[first])} entries "
            f"({c.committed[first]} committed): node {second} leads term {term2}")

        # Phase 3: the killed node returns on its storage.
        c.boot(first)
        roles = [o for o in c.boot_obs[first] if o["type"] == "role"]
        check(roles and roles[0] == {"type": "role", "role": 0, "term": stored_term},
              f"restarted node {first} booted as {roles[:1]}, expected a follower of term {stored_term}")
        appended = [o["index"] for o in c.boot_obs[first] if o["type"] == "log.append"]
        check(appended == list(range(1, c.storage[first]["log.last"] + 1)),
              f"restarted node {first} recovered indices {appended}")
        stale = len(c.logs[first])
        c.run_until(6000 * MS)
        leaders = c.current_leaders()
        check(leaders == [second], f"after the restart, leaders {leaders}")
        check(c.committed[first] >= stale, f"restarted node {first} committed only up to {c.committed[first]}")
        for i in range(NODES):
            n = c.committed[i]
            check(c.logs[i][:n] == c.logs[second][:n], f"node {i}'s committed log differs from the leader's")
            check(c.storage[i]["log.last"] == len(c.logs[i]), f"node {i}: log.last is not its log's end")
        check(c.logs[first][stale - 1][0] == term2, f"node {first}'s lone entry at {stale} was not overwritten")
        # A follower's role is reported once per change, so its term comes from `term`.
        check(c.role[first][0] == 0 and c.term[first] == term2,
              f"restarted node {first} is role {c.role[first]} in term {c.term[first]}, not a follower of {term2}")
        check(c.belief[first] == (second, term2), f"restarted node {first} believes {c.belief[first]}")
        log(f"  node {first} restarted: follower of node {second} in term {term2}; "
            f"{len(c.commits)} indices committed in all")
        c.close_all()
    finally:
        for p in c.procs:
            if p is not None:
                p.kill()
                p.wait()
    return b"".join(c.transcript)


def single_event_checks(binary):
    """Answers to single events: the options check, unknown types and members."""
    def run(lines):
        p = subprocess.run([binary], input="".join(dumps(x) + "\n" for x in lines).encode(),
                           stdout=subprocess.PIPE, timeout=10)
        check(p.returncode == 0, f"exit status {p.returncode} at end of file")
        return [json.loads(x) for x in p.stdout.decode().splitlines()]

    start = {"type": "start", "protocol": 1, "node": 0, "nodes": 3, "resource": 3, "seed": 1,
             "options": {"election_timeout": 155 * MS}, "leader_work": LEADER_WORK, "mono": 0, "wall": 0}
    out = run([start, {"type": "value", "key": "boots", "value": None}])
    errors = [o for o in out if o["type"] == "error"]
    check(len(errors) == 1 and "election_timeout" in errors[0]["message"],
          f"a timeout that is not a multiple of the tick: {out}")

    out = run([{"type": "surprise", "mono": 0, "wall": 0}])
    check(out == [{"type": "hello", "protocol": 1}, {"type": "done"}], f"an unknown event type: {out}")

    # Unknown members anywhere, and a load answered with null throughout.
    start = dict(start, options={"whatever": [1, 2], "pre_vote": True}, extra={"a": "b"})
    loads = [{"type": "value", "key": k, "value": None, "more": 1} for k in ("boots", "hs.term", "hs.vote",
                                                                             "hs.commit", "log.last")]
    out = run([start] + loads)
    check(out[-1] == {"type": "done"} and not [o for o in out if o["type"] == "error"],
          f"unknown members: {out}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary")
    ap.add_argument("--cache")
    args = ap.parse_args()
    binary = args.binary
    tmp = None
    if binary is None:
        cache = args.cache or os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                                           "electsim-etcd-raft")
        tmp = tempfile.TemporaryDirectory()
        binary = os.path.join(tmp.name, "etcd-raft-node")
        subprocess.run([os.path.join(HERE, "build-node.sh"), binary, cache], check=True)
    binary = os.path.abspath(binary)

    try:
        single_event_checks(binary)
        print("ok   single events (option check, unknown type, unknown members)")
        a = scenario(binary, 11, {}, print)
        a2 = scenario(binary, 11, {}, lambda s: None)
        check(a == a2, "the same seed gave different transcripts")
        print(f"ok   same seed, same transcript ({len(a)} bytes)")
        b = scenario(binary, 12, {}, print)
        check(a != b, "different seeds gave the same transcript")
        print("ok   another seed, another transcript")
        scenario(binary, 13, {"pre_vote": True, "check_quorum": True, "tick_interval": 5 * MS,
                              "election_timeout": 100 * MS, "heartbeat_interval": 20 * MS}, print)
        print("ok   pre_vote and check_quorum")
    except Failure as e:
        print(f"FAIL {e}")
        return 1
    finally:
        if tmp is not None:
            tmp.cleanup()
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
