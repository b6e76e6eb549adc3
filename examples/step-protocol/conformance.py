#!/usr/bin/env python3
"""Conformance kit for electsim's step protocol (docs/step-protocol.md).

    python3 conformance.py --manifest PATH [--case NAME]... [--seed N] [--list]

Runs every case in cases/*.json (or those named) against the implementation
the manifest declares and prints one line per case, `ok  NAME` or
`FAIL NAME: what`. Exits 0 when every case passes, 1 when one fails, 2 on bad
usage (an unreadable manifest, an unknown case).

The kit launches the manifest's command as electsim does (standard input and
output on one end of a stream socket, standard error inherited) and drives
the processes with a small deterministic network of its own: a heap of
(virtual time, sequence number, event), FIFO links with a fixed delay,
stable storage with electsim's write/sync/persist semantics, and a resource
that acknowledges fenced writes. Every answer line of every case is checked
against the protocol's framing, the manifest's messages and electsim's
observation vocabulary as it arrives.

Python 3 standard library only.
"""
import argparse
import heapq
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time

PROTOCOL = 1
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
MASK64 = (1 << 64) - 1
FOLLOWER, CANDIDATE, LEADER = 0, 1, 2
MAX_EVENTS = 300000  # per cluster run: more means a message or timer storm
MAX_LINE_BYTES = 1 << 20  # electsim's limit

# electsim's own messages (include/electsim/algorithms/leader_work.h).
RESOURCE_MESSAGES = {"resource.write": ("token", "seq", "key"),
                     "resource.ack": ("token", "seq", "accepted", "highest", "key")}
# The observations an election node may report, with their fields: the
# doc's list, with the optional trailing "key" that vocabulary.h gives to
# role, believe, write_begin and write, and the two lease records electsim
# also takes from a node (declare.lease_margin, lease.request).
VOCABULARY = {
    "role": ("role", "term", "token", "key"),
    "believe": ("leader", "term", "key"),
    "term": ("term",),
    "vote": ("term", "candidate"),
    "write_begin": ("token", "key"),
    "write": ("token", "seq", "key"),
    "log.append": ("index", "term", "entry"),
    "log.truncate": ("index",),
    "log.commit": ("index", "term", "entry", "current_term"),
    "declare.hearing": ("within", "over"),
    "declare.rank": ("rank",),
    "declare.rank_anytime": ("rank",),
    "declare.lease_margin": ("margin",),
    "lease.request": ("req", "key"),
}
# Effect types and their members: "int", "key" (1 to 128 UTF-8 bytes), "str",
# "msg" and "obs" (records).
EFFECTS = {
    "send": {"to": "int", "msg": "msg"},
    "set_timer": {"id": "int", "delay": "int"},
    "cancel_timer": {"id": "int"},
    "persist": {"key": "key", "value": "int"},
    "write": {"key": "key", "value": "int"},
    "sync": {},
    "load": {"key": "key"},
    "observe": {"obs": "obs"},
    "error": {"message": "str"},
    "done": {},
}


class Fail(Exception):
    """The implementation broke the protocol or a case's expectation."""


class UsageError(Exception):
    """Bad command line, manifest or case file: exit status 2."""


# ---- values ----

DURATION_UNITS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9}
DURATION_PART = re.compile(r"(\d+)(?:\.(\d{1,9}))?(ns|us|ms|s|m|h)")


def duration(text):
    """Nanoseconds of a duration as scenarios write it ("150ms", "1m30s")."""
    if not isinstance(text, str) or not text:
        raise UsageError(f"not a duration: {text!r}")
    total, pos = 0, 0
    while pos < len(text):
        part = DURATION_PART.match(text, pos)
        if not part:
            raise UsageError(f"not a duration: {text!r}")
        whole, fraction, unit = part.groups()
        scaled = (int(whole) * 10**9 + int((fraction or "").ljust(9, "0"))) * DURATION_UNITS[unit]
        if scaled % 10**9:
            raise UsageError(f"not a whole number of nanoseconds: {text!r}")
        total += scaled // 10**9
        pos = part.end()
    return total


def seconds(ns):
    return f"{ns / 1e9:.6f}s"


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def derive_seed(*parts):
    """A full unsigned 64-bit seed per (kit seed, node, boot): clients must take all 64 bits."""
    value = 0
    for part in parts:
        value = splitmix64(value ^ (part & MASK64))
    return value


def dumps(value):
    return json.dumps(value, separators=(",", ":")).encode()


def _reject_constant(name):
    raise ValueError(f"{name} is not JSON")


def _unique_members(pairs):
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError(f"member {key!r} given twice")
        obj[key] = value
    return obj


def strict_json(text):
    return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_members)


def is_int(value):
    return type(value) is int and INT64_MIN <= value <= INT64_MAX  # bool is not int here


def short(line, limit=160):
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else str(line)
    return text if len(text) <= limit else text[:limit] + "..."


# ---- the manifest ----

class Manifest:
    def __init__(self, path):
        self.path = path
        try:
            with open(path, "rb") as f:
                doc = strict_json(f.read().decode("utf-8"))
        except (OSError, ValueError) as e:
            raise UsageError(f"cannot read manifest {path}: {e}")
        try:
            self.parse(doc)
        except (AttributeError, KeyError, TypeError) as e:
            raise UsageError(f"{path}: malformed manifest ({type(e).__name__}: {e})")

    def parse(self, doc):
        path = self.path
        if not isinstance(doc, dict):
            raise UsageError(f"{path}: a manifest is a JSON object")
        if doc.get("protocol") != PROTOCOL:
            raise UsageError(f"{path}: protocol must be {PROTOCOL}")
        self.name = doc.get("name")
        command = doc.get("command")
        if not (isinstance(command, list) and command and all(isinstance(a, str) and a for a in command)):
            raise UsageError(f"{path}: command must be a non-empty list of strings")
        self.command = list(command)
        if "/" in command[0]:  # relative to the manifest, as electsim resolves it
            self.command[0] = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(path)), command[0]))
            if not os.access(self.command[0], os.X_OK):
                raise UsageError(f"{path}: command {self.command[0]} is not an executable file")
        budget = doc.get("step_budget_ms", 10000)
        if not is_int(budget) or budget <= 0:
            raise UsageError(f"{path}: step_budget_ms must be a positive integer")
        self.budget_s = budget / 1000
        self.budget_ms = budget
        self.options = {}
        self.option_types = {}
        for option in doc.get("options", []):
            name = option.get("name")
            self.option_types[name] = option
            self.options[name] = self.option_value(option, option.get("default"))
        self.messages = {}
        for message in doc.get("messages", []):
            fields = message.get("fields", [])
            if not isinstance(message.get("type"), str) or not isinstance(fields, list) or len(fields) > 6:
                raise UsageError(f"{path}: bad message declaration {message!r}")
            self.messages[message["type"]] = tuple(fields)
        roles = doc.get("message_roles", {})
        self.leader_only = [(r["type"], r["term"]) for r in roles.get("leader_only", [])]
        self.vote_grants = [(r["type"], r["term"], r.get("granted")) for r in roles.get("vote_grants", [])]
        for kind, *fields in self.leader_only + self.vote_grants:
            if any(f is not None and f not in self.messages.get(kind, ()) for f in fields):
                raise UsageError(f"{path}: message_roles names {kind} {fields}: not a declared message and fields")
        self.keeps = self.matching_guarantees(doc.get("guarantees", []))
        self.replicates_log = bool(doc.get("replicates_log", False))

    def option_value(self, option, value):
        """An option as a start event carries it (docs/step-protocol.md, `options`)."""
        kind, name = option.get("type"), option.get("name")
        if kind == "duration":
            return value if is_int(value) else duration(value)  # electsim takes plain nanoseconds too
        if kind == "int" and is_int(value):
            return value
        if kind == "bool" and isinstance(value, bool):
            return value
        if kind == "ratio" and type(value) in (int, float) and 0 <= value <= 1:
            return int(value * 1_000_000 + 0.5)  # rounded as electsim rounds it
        if kind == "choice" and value in option.get("choices", []):
            return value
        raise UsageError(f"{self.path}: option {name!r} of type {kind!r}: bad value {value!r}")

    def matching_guarantees(self, entries):
        """The first entry whose `when` options all equal the defaults: what the kit runs."""
        for entry in entries:
            when = entry.get("when", {})
            if all(name in self.option_types and self.option_value(self.option_types[name], value) ==
                   self.options[name] for name, value in when.items()):
                return entry.get("keeps", {})
        return {}

    def promises(self, checker, fault_kinds):
        kept = self.keeps.get(checker)
        return kept == "all" or (isinstance(kept, list) and set(fault_kinds) <= set(kept))

    def leader_term(self, msg):
        for kind, field in self.leader_only:
            if msg.get("type") == kind:
                return msg.get(field, 0)
        return None

    def grant_term(self, msg):
        for kind, term_field, granted_field in self.vote_grants:
            if msg.get("type") == kind:
                if granted_field and msg.get(granted_field, 0) == 0:
                    return None
                return msg.get(term_field, 0)
        return None


# ---- answers: framing, records, vocabulary ----

class Validator:
    def __init__(self, manifest, nodes):
        self.manifest, self.nodes = manifest, nodes

    def effect(self, line):
        """The effect a line holds, or Fail saying what is wrong with it."""
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            raise Fail("a line that is not UTF-8")
        if not text.strip():
            raise Fail("a blank line")
        try:
            obj = strict_json(text)
        except ValueError as e:
            raise Fail(f"a line that is not JSON ({e})")
        if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
            raise Fail("a line that is not a JSON object with a string type")
        members = EFFECTS.get(obj["type"])
        if members is None:
            raise Fail(f"an unknown effect type {obj['type']!r}")
        for member, kind in members.items():  # members it does not know are ignored, as readers must
            if member not in obj:
                raise Fail(f"{obj['type']} without its member {member!r}")
            self.member(obj["type"], member, kind, obj[member])
        return obj

    def member(self, effect, member, kind, value):
        where = f"{effect}.{member}"
        if kind == "int" and not is_int(value):
            raise Fail(f"{where} is {value!r}, not a 64-bit integer")
        if kind == "str" and not isinstance(value, str):
            raise Fail(f"{where} is not a string")
        if kind == "key" and not (isinstance(value, str) and 1 <= len(value.encode()) <= 128):
            raise Fail(f"{where} is {value!r}, not a string of 1 to 128 bytes")
        if effect == "send" and member == "to" and not 0 <= value <= self.nodes:
            raise Fail(f"send to {value}: the nodes are 0..{self.nodes - 1} and the resource {self.nodes}")
        if effect == "set_timer" and member == "delay" and value < 0:
            raise Fail(f"set_timer with a negative delay {value}")
        if kind == "msg":
            self.record(where, value, {**RESOURCE_MESSAGES, **self.manifest.messages}, "the manifest's messages")
        if kind == "obs":
            self.record(where, value, VOCABULARY, "electsim's vocabulary")
            self.observation(value)

    def record(self, where, record, types, source):
        if not isinstance(record, dict) or not isinstance(record.get("type"), str):
            raise Fail(f"{where} is not a record with a string type")
        fields = types.get(record["type"])
        if fields is None:
            raise Fail(f"{where} has type {record['type']!r}, which is not in {source}")
        if record["type"].startswith("log.") and not self.manifest.replicates_log:
            raise Fail(f"{where} is {record['type']} but the manifest says replicates_log is false")
        for name, value in record.items():
            if name == "type":
                continue
            if name not in fields:
                raise Fail(f"{where} {record['type']} has field {name!r}; its fields are {list(fields)}")
            if not is_int(value):
                raise Fail(f"{where} {record['type']}.{name} is {value!r}, not a 64-bit integer")
        if len(record) - 1 > 6:
            raise Fail(f"{where} has more than six fields")

    def observation(self, obs):
        kind = obs["type"]
        if kind == "role":
            if obs.get("role", 0) not in (FOLLOWER, CANDIDATE, LEADER):
                raise Fail(f"role {obs.get('role')}: roles are 0 follower, 1 candidate, 2 leader")
            if obs.get("role", 0) == LEADER and "token" not in obs:
                raise Fail("the leader role without its token")
        if kind == "believe" and not -1 <= obs.get("leader", 0) < self.nodes:
            raise Fail(f"believe in leader {obs.get('leader')}: not -1 nor a node")
        if kind == "vote" and not 0 <= obs.get("candidate", 0) < self.nodes:
            raise Fail(f"vote for candidate {obs.get('candidate')}: not a node")


# ---- stable storage ----

class Storage:
    """Per node, electsim's model: a write is buffered (the page cache) until a
    sync; persist is durable at once; a load sees buffered writes; a process
    crash keeps them and a power loss drops them."""

    def __init__(self, durable=None, buffered=None):
        self.durable, self.buffered = dict(durable or {}), dict(buffered or {})

    def copy(self):
        return Storage(self.durable, self.buffered)

    def keys(self):
        return set(self.durable) | set(self.buffered)

    def load(self, key):
        return self.buffered[key] if key in self.buffered else self.durable.get(key)

    def apply(self, effect):
        kind = effect["type"]
        if kind == "write":
            self.buffered[effect["key"]] = effect["value"]
        elif kind == "persist":
            self.buffered.pop(effect["key"], None)
            self.durable[effect["key"]] = effect["value"]
        elif kind == "sync":
            self.durable.update(self.buffered)
            self.buffered.clear()

    def power_loss(self):
        self.buffered.clear()


# ---- one process ----

class Proc:
    """One boot's process, on one end of a socketpair as electsim runs it."""

    def __init__(self, kit, label, nodes):
        self.kit, self.label = kit, label
        self.validator = Validator(kit.manifest, nodes)
        parent, child = socket.socketpair()
        try:
            # Its own process group, as electsim starts it: a Ctrl-C meant for the kit is not its.
            self.popen = subprocess.Popen(kit.manifest.command, stdin=child.fileno(), stdout=child.fileno(),
                                          process_group=0)
        except OSError as e:
            parent.close()
            raise Fail(f"cannot start {' '.join(kit.manifest.command)}: {e}")
        finally:
            child.close()
        kit.procs.append(self)
        self.sock = parent
        self.sock.settimeout(kit.manifest.budget_s)  # for sends: a process that never reads fails
        self.buffer = b""
        self.hello = None
        self.transcript = []  # (event line, answer lines) per event

    def fail(self, what):
        raise Fail(f"{self.label}: {what}")

    def exit_note(self):
        try:
            status = self.popen.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            return ""
        return f" (it exited with status {status})" if status >= 0 else f" (killed by signal {-status})"

    def read_line(self, what):
        """One line, within the step budget, which applies to each read as electsim's does."""
        deadline = time.monotonic() + self.kit.manifest.budget_s
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0:
                line, self.buffer = self.buffer[:end], self.buffer[end + 1:]
                return line
            if len(self.buffer) > MAX_LINE_BYTES:
                self.fail(f"{what}: a line of more than {MAX_LINE_BYTES} bytes")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.fail(f"{what}: no line within the step budget ({self.kit.manifest.budget_ms} ms)")
            ready, _, _ = select.select([self.sock], [], [], remaining)
            if not ready:
                continue
            try:
                data = self.sock.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                unended = f" after an unended line {short(self.buffer)!r}" if self.buffer else ""
                self.fail(f"{what}: the process closed its output{unended}{self.exit_note()}")
            self.buffer += data

    def send_line(self, data):
        try:
            self.sock.sendall(data + b"\n")
        except OSError as e:
            self.fail(f"cannot write to the process ({e}){self.exit_note()}")

    def read_hello(self):
        line = self.read_line("before the first event")
        try:
            hello = strict_json(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            hello = None
        if not (isinstance(hello, dict) and hello.get("type") == "hello" and is_int(hello.get("protocol"))
                and hello["protocol"] == PROTOCOL):
            self.fail(f'the first line is {short(line)!r}, not {{"type":"hello","protocol":{PROTOCOL}}}')
        self.hello = line

    def step(self, event, storage, value_extra=None):
        """Sends one event, answers its loads from `storage` (which its writes
        change) and returns its effects, each line checked as it comes."""
        return self.step_line(dumps(event), event, storage, value_extra)[0]

    def step_line(self, data, event, storage, value_extra=None):
        what = f"answer to {event.get('type')} event #{len(self.transcript) + 1} at {seconds(event.get('mono', 0))}"
        self.send_line(data)
        lines, effects = [], []
        while True:
            line = self.read_line(what)
            lines.append(line)
            try:
                effect = self.validator.effect(line)
            except Fail as e:
                self.fail(f"{what}: {e}: {short(line)}")
            if effect["type"] == "done":
                break
            storage.apply(effect)
            if effect["type"] == "load":
                value = {"type": "value", "key": effect["key"], "value": storage.load(effect["key"])}
                self.send_line(dumps({**value, **(value_extra or {})}))
            effects.append(effect)
        self.transcript.append((data, lines))
        return effects, lines

    def kill(self):
        if self.popen.poll() is None:
            self.popen.kill()
        self.popen.wait()
        self.sock.close()


# ---- the kit's network ----

class Boot:
    def __init__(self, node, index, storage, proc):
        self.node, self.index, self.proc = node, index, proc
        self.storage = storage.copy()  # what it booted on, for a replay
        self.start_loads = []


class Safety:
    """electsim's election_safety, single_vote and term_monotonic checkers, in
    small: observations and the message roles the manifest declares."""

    def __init__(self, manifest, active, election_safety_until):
        self.manifest, self.active, self.until = manifest, active, election_safety_until
        self.leader_of_term, self.vote_of, self.highest_term = {}, {}, {}

    def see(self, now, node, obs=None, sent=None):
        m = self.manifest
        if obs is not None and "key" not in obs:
            if obs["type"] == "role" and obs.get("role") == LEADER:
                self.lead(now, node, obs.get("term", 0), "claims the leader role")
            elif obs["type"] == "vote":
                self.vote(now, node, obs.get("term", 0), obs.get("candidate", 0))
            elif obs["type"] == "term":
                self.term(now, node, obs.get("term", 0), "reported term")
        if sent is not None:
            to, msg = sent
            term = m.leader_term(msg)
            if term is not None:
                self.lead(now, node, term, f"sends {msg['type']}")
                self.term(now, node, term, f"sent {msg['type']} of term")
            term = m.grant_term(msg)
            if term is not None:
                self.vote(now, node, term, to)
                self.term(now, node, term, f"sent {msg['type']} of term")

    def lead(self, now, node, term, how):
        if "election_safety" not in self.active and now >= self.until:
            return
        first = self.leader_of_term.setdefault(term, node)
        if first != node:
            raise Fail(f"election_safety: at {seconds(now)} node {node} {how} in term {term}, "
                       f"which node {first} leads")

    def vote(self, now, node, term, candidate):
        if "single_vote" in self.active:
            first = self.vote_of.setdefault((node, term), candidate)
            if first != candidate:
                raise Fail(f"single_vote: at {seconds(now)} node {node} votes for {candidate} in term {term}, "
                           f"having voted for {first}")

    def term(self, now, node, term, how):
        if "term_monotonic" in self.active:
            highest = self.highest_term.get(node)
            if highest is not None and term < highest[0]:
                raise Fail(f"term_monotonic: at {seconds(now)} node {node}'s term went down: it {how} {term} "
                           f"after it {highest[1]} {highest[0]}")
            if highest is None or term >= highest[0]:
                self.highest_term[node] = (term, how)


class Cluster:
    """Election nodes 0..n-1 and the resource n on FIFO links with one fixed
    delay. Events run in (virtual time, sequence) order; mono = wall = now."""

    def __init__(self, kit, spec, require=()):
        self.kit, self.manifest = kit, kit.manifest
        self.n = spec.get("nodes", 5)
        self.delay = duration(spec.get("delay", "1ms"))
        self.end = duration(spec["run"])
        work = spec.get("leader_work", {})
        self.leader_work = {"write_interval": duration(work.get("interval", "100ms")),
                            "write_duration": duration(work.get("duration", "5ms"))}
        self.now, self.seq, self.queue = 0, 0, []
        self.procs, self.boot_count = [None] * self.n, [0] * self.n
        self.storage = [Storage() for _ in range(self.n)]
        self.armed = [{} for _ in range(self.n)]  # timer id -> generation
        self.generation = 0
        self.role = [None] * self.n  # (role, term, token) while up
        self.isolated, self.names, self.watches = set(), {}, []
        self.boots, self.records = [], []  # records: (time, node, boot index, obs or None, (to, msg) or None)
        self.resource_highest = 0
        steps = spec.get("steps", [])
        self.fault_kinds = sorted({"partition" if "isolate" in s else
                                   "power_loss" if s.get("lose_unsynced") else "crash"
                                   for s in steps if "isolate" in s or "crash" in s})
        fault_times = [duration(s["at"]) for s in steps if "isolate" in s or "crash" in s]
        active = {c for c in ("election_safety", "single_vote", "term_monotonic")
                  if c in require or self.manifest.promises(c, self.fault_kinds)}
        # Before any fault, any election algorithm elects one leader per term.
        self.safety = Safety(self.manifest, active, min(fault_times, default=self.end + 1))
        for step in steps:
            self.push(duration(step["at"]), "step", step)
        self.spawned = [Proc(kit, f"node {i} (boot 1)", self.n) for i in range(self.n)]  # start up in parallel
        for node in range(self.n):
            self.push(0, "start", node)

    def push(self, at, kind, data):
        self.seq += 1
        heapq.heappush(self.queue, (at, self.seq, kind, data))

    def cut(self, a, b):
        return a in self.isolated or b in self.isolated

    def run(self):
        for _ in range(MAX_EVENTS):
            if not self.queue or self.queue[0][0] > self.end:
                return self
            self.now, _, kind, data = heapq.heappop(self.queue)
            getattr(self, "on_" + kind)(data)
        raise Fail(f"more than {MAX_EVENTS} events by {seconds(self.now)}: a message or timer storm")

    # ---- events ----

    def on_start(self, node):
        if self.procs[node] is not None:
            return  # restarted by a step already
        self.boot_count[node] += 1
        index = self.boot_count[node]
        proc = self.spawned[node] if index == 1 else Proc(self.kit, f"node {node} (boot {index})", self.n)
        proc.read_hello()
        boot = Boot(node, index, self.storage[node], proc)
        self.boots.append(boot)
        self.procs[node], self.role[node], self.armed[node] = proc, (FOLLOWER, 0, 0), {}
        event = {"type": "start", "protocol": PROTOCOL, "node": node, "nodes": self.n, "resource": self.n,
                 "seed": derive_seed(self.kit.seed, node, index), "options": self.kit.options_json,
                 "leader_work": self.leader_work, "mono": self.now, "wall": self.now}
        effects = self.step(node, event)
        boot.start_loads = [e["key"] for e in effects if e["type"] == "load"]

    def on_deliver(self, data):
        sender, to, msg = data
        if self.cut(sender, to):
            return
        if to == self.n:
            self.resource(sender, msg)
        elif self.procs[to] is not None:
            self.step(to, {"type": "message", "from": sender, "msg": self.as_delivered(msg), "mono": self.now,
                           "wall": self.now})

    def on_timer(self, data):
        node, boot, timer, generation = data
        if self.procs[node] is None or self.boot_count[node] != boot or self.armed[node].get(timer) != generation:
            return
        del self.armed[node][timer]
        self.step(node, {"type": "timer", "id": timer, "mono": self.now, "wall": self.now})

    def on_step(self, step):
        if "during" in step:
            node = self.select(step["of"])
            deadline = self.now + duration(step.get("within", "1s"))
            self.watches.append((node, step["during"], step))
            self.push(deadline, "watch_expired", step)
        else:
            self.apply(step)

    def on_watch_expired(self, step):
        # No such moment in time: the step lands anyway, late.
        if any(w[2] is step for w in self.watches):
            self.watches = [w for w in self.watches if w[2] is not step]
            self.apply(step)

    def as_delivered(self, msg):
        """A record as electsim hands it on: its type's fields in declared order,
        up to the last one given, those not given as 0."""
        fields = {**RESOURCE_MESSAGES, **self.manifest.messages}[msg["type"]]
        size = max((i + 1 for i, f in enumerate(fields) if f in msg), default=0)
        return {"type": msg["type"], **{f: msg.get(f, 0) for f in fields[:size]}}

    def resource(self, sender, msg):
        if msg.get("type") != "resource.write":
            return
        token = msg.get("token", 0)
        accepted = token >= self.resource_highest
        self.resource_highest = max(self.resource_highest, token)
        ack = {"type": "resource.ack", "token": token, "seq": msg.get("seq", 0), "accepted": int(accepted),
               "highest": self.resource_highest}
        if "key" in msg:
            ack["key"] = msg["key"]
        if not self.cut(self.n, sender):
            self.push(self.now + self.delay, "deliver", (self.n, sender, ack))

    # ---- a node's answer ----

    def step(self, node, event):
        effects = self.procs[node].step(event, self.storage[node])
        boot = self.boot_count[node]
        fired = []
        for effect in effects:
            kind = effect["type"]
            if kind == "send":
                to, msg = effect["to"], effect["msg"]
                self.records.append((self.now, node, boot, None, (to, msg)))
                self.safety.see(self.now, node, sent=(to, msg))
                if msg["type"] == "resource.write":
                    self.check_leads(node, "sends resource.write", msg)
                if not self.cut(node, to):
                    self.push(self.now + self.delay, "deliver", (node, to, msg))
            elif kind == "set_timer":
                self.generation += 1
                self.armed[node][effect["id"]] = self.generation
                self.push(self.now + effect["delay"], "timer", (node, boot, effect["id"], self.generation))
            elif kind == "cancel_timer":
                self.armed[node].pop(effect["id"], None)
            elif kind == "observe":
                obs = effect["obs"]
                self.records.append((self.now, node, boot, obs, None))
                self.safety.see(self.now, node, obs=obs)
                if "key" not in obs:
                    if obs["type"] == "role":
                        self.role[node] = (obs.get("role", 0), obs.get("term", 0), obs.get("token", 0))
                    elif obs["type"] in ("write_begin", "write"):
                        self.check_leads(node, f"observes {obs['type']}", obs)
                fired += [w for w in self.watches if w[0] == node and w[1] == obs["type"]]
            elif kind == "error":
                raise Fail(f"node {node} reported an error at {seconds(self.now)}: {effect['message']}")
        for watch in fired:
            if watch in self.watches:
                self.watches.remove(watch)
                self.apply(watch[2])
        return effects

    def check_leads(self, node, what, record):
        role = self.role[node]
        if not (role and role[0] == LEADER and role[2] == record.get("token", 0)):
            state = f"the leader role with token {role[2]}" if role and role[0] == LEADER else \
                f"in role {role[0] if role else 'down'}"
            raise Fail(f"at {seconds(self.now)} node {node} {what} {short(dumps(record))} while {state}: a node "
                       f"writes only under the token it leads with, and stepping down abandons a write")

    # ---- fault steps and expectations ----

    def select(self, selector):
        if is_int(selector) and 0 <= selector < self.n:
            return selector
        if selector == "leader":
            leaders = [(r[1], -i) for i, r in enumerate(self.role) if r and r[0] == LEADER]
            if not leaders:
                raise Fail(f"at {seconds(self.now)} no node leads, and the case needs one")
            return -max(leaders)[1]
        if selector in self.names:
            return self.names[selector]
        raise UsageError(f"unknown node selector {selector!r}")

    def apply(self, step):
        if "isolate" in step:
            node = self.select(step["isolate"])
            self.isolated.add(node)
            if "for" in step:
                self.push(self.now + duration(step["for"]), "step", {"at": "0s", "rejoin": node})
        elif "rejoin" in step:
            self.isolated.discard(step["rejoin"])
        elif "heal" in step:
            self.isolated.clear()
        elif "crash" in step:
            node = self.select(step["crash"])
            if self.procs[node] is None:
                raise UsageError(f"at {seconds(self.now)} node {node} is already down")
            self.procs[node].kill()  # SIGKILL, as electsim crashes a node
            self.procs[node], self.role[node] = None, None
            if step.get("lose_unsynced"):
                self.storage[node].power_loss()
            if "for" in step:
                self.push(self.now + duration(step["for"]), "start", node)
        elif "restart" in step:
            node = self.select(step["restart"])
            if self.procs[node] is None:
                self.on_start(node)
        elif "expect_leader" in step:
            self.expect_leader(step["expect_leader"])
            return
        else:
            raise UsageError(f"a step with no action: {step!r}")
        if "as" in step:
            self.names[step["as"]] = node

    def expect_leader(self, spec):
        among = spec.get("among", "up")
        nodes = [i for i in range(self.n) if self.procs[i] is not None and
                 (among == "up" or i not in self.isolated)]
        leaders = [i for i in nodes if self.role[i][0] == LEADER]
        if len(leaders) != 1:
            raise Fail(f"at {seconds(self.now)} {len(leaders)} of the {among} nodes {nodes} lead "
                       f"({leaders}); expected exactly one")
        if "not" in spec and leaders[0] == self.names.get(spec["not"]):
            raise Fail(f"at {seconds(self.now)} node {leaders[0]} ({spec['not']}) still leads the {among} nodes; "
                       f"expected another leader")


# ---- replays ----

def replay(kit, boot, extra_members=None, unknown_event=None, unknown_every=0):
    """Feeds a fresh process the events `boot` got, from the storage it booted
    on, and demands the same answers byte for byte. With `extra_members`,
    every event and load answer carries them too; with `unknown_event`, an
    event of an unknown type follows every `unknown_every`-th event and must
    be answered with done alone."""
    label = f"a second process for node {boot.node} (boot {boot.index})"
    proc = Proc(kit, label, kit.nodes_of(boot))
    proc.read_hello()
    if proc.hello != boot.proc.hello:
        raise Fail(f"{label}: hello {short(proc.hello)!r} differs from the first's {short(boot.proc.hello)!r}")
    storage = boot.storage.copy()
    for number, (data, expected) in enumerate(boot.proc.transcript, 1):
        event = json.loads(data)
        if extra_members:
            event = {**event, **extra_members}
            if event["type"] == "start":
                event["leader_work"] = {**event["leader_work"], **extra_members}
            data = dumps(event)
        _, lines = proc.step_line(data, event, storage, extra_members)
        if lines != expected:
            at = next((i for i, (a, b) in enumerate(zip(lines, expected)) if a != b), min(len(lines), len(expected)))
            got = short(lines[at]) if at < len(lines) else "(nothing)"
            want = short(expected[at]) if at < len(expected) else "(nothing)"
            raise Fail(f"{label}: answer to {event['type']} event #{number} at {seconds(event.get('mono', 0))} "
                       f"differs at line {at + 1}: {got!r} where the first process answered {want!r}")
        if unknown_event and unknown_every and number % unknown_every == 0:
            odd = {**unknown_event, "mono": event.get("mono", 0), "wall": event.get("wall", 0)}
            _, lines = proc.step_line(dumps(odd), odd, storage)
            if len(lines) != 1:
                raise Fail(f"{label}: an event of unknown type {odd['type']!r} was answered with "
                           f"{short(b' '.join(lines))!r}, not done alone")
    proc.kill()


# ---- cases ----

def case_hello(kit, spec):
    Proc(kit, "the process", 1).read_hello()


def case_cluster(kit, spec):
    """Framing and the election checks: every answer is checked as it comes."""
    Cluster(kit, spec["cluster"], spec.get("require", [])).run()


def case_determinism(kit, spec):
    cluster = Cluster(kit, spec["cluster"], spec.get("require", [])).run()
    for boot in cluster.boots:
        replay(kit, boot)


def case_restart(kit, spec):
    cluster = Cluster(kit, spec["cluster"], spec.get("require", [])).run()
    restarted = [b for b in cluster.boots if b.index > 1]
    if not restarted:
        raise UsageError("the case restarts no node")
    for boot in restarted:
        kept = boot.storage.keys()
        if kept and not kept & set(boot.start_loads):
            raise Fail(f"node {boot.node} (boot {boot.index}) booted on stored keys {sorted(kept)} and loaded "
                       f"none of them at start")
        replay(kit, boot)


def case_unknown_members(kit, spec):
    cluster = Cluster(kit, spec["cluster"], spec.get("require", [])).run()
    for boot in cluster.boots:
        replay(kit, boot, spec["extra_members"], spec["unknown_event"], spec.get("unknown_every", 1))


def case_eof(kit, spec):
    for events in (False, True):
        label = "the process (input closed after a start)" if events else "the process (input closed after hello)"
        proc = Proc(kit, label, 1)
        proc.read_hello()
        if events:
            cluster_of_one = {"type": "start", "protocol": PROTOCOL, "node": 0, "nodes": 1, "resource": 1,
                              "seed": derive_seed(kit.seed, 0, 1), "options": kit.options_json,
                              "leader_work": {"write_interval": 100000000, "write_duration": 5000000},
                              "mono": 0, "wall": 0}
            proc.step(cluster_of_one, Storage())
        proc.sock.close()
        try:
            status = proc.popen.wait(timeout=kit.manifest.budget_s)
        except subprocess.TimeoutExpired:
            proc.fail(f"still running {kit.manifest.budget_ms} ms after its input ended")
        if status != 0:
            proc.fail(f"exited with status {status} at end of file, not 0" if status > 0 else
                      f"killed by signal {-status} at end of file")


def case_leader_work(kit, spec):
    cluster = Cluster(kit, spec["cluster"], spec.get("require", [])).run()
    interval = cluster.leader_work["write_interval"]
    pause = cluster.leader_work["write_duration"]
    claim = next((r for r in cluster.records if r[3] and r[3]["type"] == "role" and r[3].get("role") == LEADER
                  and "key" not in r[3]), None)
    if claim is None:
        raise Fail("no node took the leader role")
    elected, leader, boot, token = claim[0], claim[1], claim[2], claim[3].get("token", 0)
    who = f"node {leader} (leader from {seconds(elected)}, token {token})"
    begins, pending, wrote, sent = [], None, 0, None
    for now, node, at_boot, obs, send in cluster.records[cluster.records.index(claim) + 1:]:
        if node != leader or at_boot != boot:
            continue
        if obs and obs["type"] == "role" and "key" not in obs:
            break  # it left (or re-claimed) the role: its first leadership is over
        if send and send[1]["type"] == "resource.write":
            msg = send[1]
            expected = {"token": token, "seq": wrote + 1}
            if pending is None or now != pending + pause or send[0] != cluster.n or \
                    {k: msg.get(k, 0) for k in expected} != expected:
                raise Fail(f"{who} sent {short(dumps(msg))} to {send[0]} at {seconds(now)}; expected "
                           f"resource.write {expected} to {cluster.n} write_duration after the write_begin of "
                           f"{seconds(pending) if pending is not None else '(none)'}")
            sent = msg
        if obs and obs["type"] == "write_begin" and "key" not in obs:
            due = elected if not begins else begins[-1] + interval
            if now != due or obs.get("token", 0) != token:
                raise Fail(f"{who} observed {short(dumps(obs))} at {seconds(now)}; expected token {token} at "
                           f"{seconds(due)} (at election, then every write_interval)")
            begins.append(now)
            pending = now
        if obs and obs["type"] == "write" and "key" not in obs:
            if sent is None or {k: obs.get(k, 0) for k in ("token", "seq")} != \
                    {k: sent.get(k, 0) for k in ("token", "seq")}:
                raise Fail(f"{who} observed {short(dumps(obs))} at {seconds(now)} without first sending "
                           f"resource.write with that token and seq in the same answer")
            wrote, pending, sent = wrote + 1, None, None
    if wrote < spec["writes"]:
        raise Fail(f"{who} completed {wrote} writes during its leadership; expected at least {spec['writes']}")


CHECKS = {"hello": case_hello, "cluster": case_cluster, "determinism": case_determinism, "restart": case_restart,
          "unknown-members": case_unknown_members, "eof": case_eof, "leader-work": case_leader_work}


# ---- the kit ----

class Kit:
    def __init__(self, manifest, seed):
        self.manifest, self.seed, self.procs = manifest, seed, []
        self.options_json = dict(sorted(manifest.options.items()))  # by name, as electsim writes them

    def nodes_of(self, boot):
        return json.loads(boot.proc.transcript[0][0])["nodes"] if boot.proc.transcript else 1

    def kill_all(self):
        for proc in self.procs:
            proc.kill()
        self.procs = []

    def run_case(self, name, spec):
        try:
            CHECKS[spec["check"]](self, spec)
            return None
        except Fail as e:
            return str(e)
        finally:
            self.kill_all()


def load_cases(directory):
    cases = {}
    for file in sorted(os.listdir(directory)):
        if file.endswith(".json"):
            path = os.path.join(directory, file)
            try:
                with open(path, "rb") as f:
                    spec = strict_json(f.read().decode("utf-8"))
            except (OSError, ValueError) as e:
                raise UsageError(f"cannot read case {path}: {e}")
            if spec.get("check") not in CHECKS:
                raise UsageError(f"{path}: check must be one of {sorted(CHECKS)}")
            cases[file[:-len(".json")]] = spec
    return cases


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--manifest", required=True, help="the implementation's manifest")
    parser.add_argument("--case", action="append", help="run only this case (repeatable)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the kit's network (default 1)")
    parser.add_argument("--list", action="store_true", help="list the cases with their descriptions")
    args = parser.parse_args(argv)
    try:
        cases = load_cases(os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases"))
        if args.list:
            for name, spec in cases.items():
                print(f"{name:16} {spec.get('description', '')}")
            return 0
        manifest = Manifest(args.manifest)
        unknown = [c for c in args.case or [] if c not in cases]
        if unknown:
            raise UsageError(f"no such case: {', '.join(unknown)} (cases: {', '.join(cases)})")
        kit = Kit(manifest, args.seed)
        failed = 0
        for name in args.case or cases:
            problem = kit.run_case(name, cases[name])
            print(f"ok  {name}" if problem is None else f"FAIL {name}: {problem}", flush=True)
            failed += problem is not None
        return 1 if failed else 0
    except UsageError as e:
        print(f"conformance: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that `finally` kills our processes
    sys.exit(main(sys.argv[1:]))
