#!/usr/bin/env python3
"""pyraft: Raft's leader election as an electsim step-protocol node.

One process per node boot (docs/step-protocol.md). Terms, randomized election
timeouts, one vote per term, heartbeats from the leader and the leader's
writes to the shared resource. There is no log, so every candidate's log is
as up to date as any other and a vote depends on the term alone.

Python 3 standard library only. Nothing here reads a clock, the environment
or a random source: time and the seed come in the events.
"""
import json
import sys

FOLLOWER, CANDIDATE, LEADER = 0, 1, 2  # electsim's vocabulary (vocab::Role)
NOBODY = -1
ELECTION, HEARTBEAT, WORK_TICK, WORK_SEND = 1, 2, 3, 4  # timer ids
TERM_KEY, VOTE_KEY = "term", "voted_for"
MASK64 = (1 << 64) - 1


class SplitMix64:
    """The node's one random stream. Python's `random` may change its
    algorithm between versions; a run must replay identically anywhere."""

    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def between(self, low, high):
        """Uniform in [low, high], up to a modulo bias far below 2^-40."""
        return low + self.next() % (high - low + 1)


class Node:
    def __init__(self, inp, out):
        self.inp, self.out = inp, out
        self.role = FOLLOWER
        self.unsynced = False
        self.election_armed = False
        self.send_armed = False  # a leader write is being prepared
        self.writes_sent = 0
        self.token = 0  # Raft's fencing token is the term it was elected in
        self.reported_role = None  # (role, term) last observed
        self.reported_belief = None  # (leader, term) last observed

    # ---- effects ----

    def emit(self, effect):
        self.out.write(json.dumps(effect, separators=(",", ":")).encode() + b"\n")

    def observe(self, kind, **fields):
        self.emit({"type": "observe", "obs": {"type": kind, **fields}})

    def load(self, key):
        self.emit({"type": "load", "key": key})
        self.out.flush()  # electsim answers before we may read on
        line = self.inp.readline()
        if not line:
            sys.exit(0)  # electsim ended the run
        return json.loads(line).get("value")

    def write(self, key, value):
        self.emit({"type": "write", "key": key, "value": value})
        self.unsynced = True

    def make_durable(self):
        if self.unsynced:
            self.unsynced = False
            self.emit({"type": "sync"})

    def send(self, to, kind, **fields):
        # Raft: term and vote are on disk before any message that depends on them leaves.
        self.make_durable()
        self.emit({"type": "send", "to": to, "msg": {"type": kind, **fields}})

    def broadcast(self, kind, **fields):
        for peer in range(self.nodes):
            if peer != self.me:
                self.send(peer, kind, **fields)

    def set_timer(self, timer, delay):
        self.emit({"type": "set_timer", "id": timer, "delay": delay})

    def cancel_timer(self, timer):
        self.emit({"type": "cancel_timer", "id": timer})

    # ---- events ----

    def on_start(self, event):
        self.me, self.nodes, self.resource = event["node"], event["nodes"], event["resource"]
        self.rng = SplitMix64(event["seed"])
        options = event["options"]
        self.timeout_min = options["election_timeout_min"]
        self.timeout_max = options["election_timeout_max"]
        self.heartbeat_interval = options["heartbeat_interval"]
        self.write_interval = event["leader_work"]["write_interval"]
        self.write_duration = event["leader_work"]["write_duration"]
        if self.timeout_max < self.timeout_min:
            self.emit({"type": "error", "message": "election_timeout_max is below election_timeout_min"})
            return
        # A new boot comes back as a follower with the term and vote it wrote.
        stored_term = self.load(TERM_KEY)
        stored_vote = self.load(VOTE_KEY)
        self.term = stored_term or 0
        self.voted_for = NOBODY if stored_vote is None else stored_vote
        if stored_term is not None:
            self.observe("term", term=self.term)
        self.grants = set()
        self.set_role(FOLLOWER)
        self.set_belief(NOBODY)
        self.reset_election_timer()

    def on_message(self, event):
        sender, msg = event["from"], event["msg"]
        kind = msg.get("type")
        handler = self.HANDLERS.get(kind)
        if handler is None or not 0 <= sender < self.nodes:
            return  # resource.ack: Raft learns terms from its peers only
        term = msg.get("term", 0)
        if term > self.term:
            self.become_follower(term, sender if kind == "pyraft.append" else NOBODY)
        elif term < self.term:
            # Tell a stale leader or candidate about the newer term; drop stale replies.
            if kind == "pyraft.append":
                self.send(sender, "pyraft.append_reply", term=self.term, success=0)
            elif kind == "pyraft.request_vote":
                self.send(sender, "pyraft.vote", term=self.term, granted=0)
            return
        handler(self, sender, msg)
        # A term learned from a message needing no reply is already reported: make it stick.
        self.make_durable()

    def on_append(self, sender, msg):
        if self.role == LEADER:
            return  # a second leader of our term: only a bug makes one
        if self.role == CANDIDATE:
            self.become_follower(self.term, sender)
        self.set_belief(sender)
        self.reset_election_timer()
        self.send(sender, "pyraft.append_reply", term=self.term, success=1)

    def on_request_vote(self, sender, msg):
        granted = self.voted_for in (NOBODY, sender)
        if granted:
            if self.voted_for != sender:
                self.voted_for = sender
                self.write(VOTE_KEY, sender)
            self.observe("vote", term=self.term, candidate=sender)
            if self.role != LEADER:
                self.reset_election_timer()  # give that candidate time to win
        self.send(sender, "pyraft.vote", term=self.term, granted=int(granted))

    def on_vote(self, sender, msg):
        if self.role == CANDIDATE and msg.get("granted", 0):
            self.grants.add(sender)  # a set: a duplicated reply counts once
            if len(self.grants) >= self.nodes // 2 + 1:
                self.become_leader()

    HANDLERS = {"pyraft.append": on_append, "pyraft.request_vote": on_request_vote, "pyraft.vote": on_vote,
                "pyraft.append_reply": lambda self, sender, msg: None}  # no log to advance

    def on_timer(self, event):
        timer = event["id"]
        if timer == ELECTION:
            self.election_armed = False
            if self.role != LEADER:
                self.become_candidate()
        elif timer == HEARTBEAT and self.role == LEADER:
            self.broadcast("pyraft.append", term=self.term)
            self.set_timer(HEARTBEAT, self.heartbeat_interval)
        elif timer == WORK_TICK:
            self.set_timer(WORK_TICK, self.write_interval)
            if not self.send_armed and self.role == LEADER:
                self.observe("write_begin", token=self.token)
                self.set_timer(WORK_SEND, self.write_duration)
                self.send_armed = True
        elif timer == WORK_SEND:
            # No check here: the decision was made at write_begin; fencing covers the gap.
            self.send_armed = False
            self.writes_sent += 1
            self.send(self.resource, "resource.write", token=self.token, seq=self.writes_sent)
            self.observe("write", token=self.token, seq=self.writes_sent)

    # ---- transitions ----

    def become_follower(self, term, leader):
        self.step_down()
        if term > self.term:
            self.update_term(term)
        self.set_role(FOLLOWER)
        self.set_belief(leader)
        if not self.election_armed:
            self.reset_election_timer()

    def become_candidate(self):
        self.update_term(self.term + 1)
        self.voted_for = self.me
        self.write(VOTE_KEY, self.me)
        self.observe("vote", term=self.term, candidate=self.me)
        self.set_role(CANDIDATE)
        self.set_belief(NOBODY)
        self.grants = {self.me}
        self.reset_election_timer()
        self.broadcast("pyraft.request_vote", term=self.term)
        if len(self.grants) >= self.nodes // 2 + 1:
            self.become_leader()  # a one-node cluster

    def become_leader(self):
        self.make_durable()  # a one-node cluster sends nothing, yet its claim rests on its term
        self.cancel_timer(ELECTION)
        self.election_armed = False
        self.token = self.term
        self.set_role(LEADER)
        self.broadcast("pyraft.append", term=self.term)  # the first heartbeat
        self.set_timer(HEARTBEAT, self.heartbeat_interval)
        self.set_timer(WORK_TICK, 0)  # a new leader proves itself at once

    def step_down(self):
        if self.role != LEADER:
            return
        for timer in (HEARTBEAT, WORK_TICK, WORK_SEND):
            self.cancel_timer(timer)  # abandons a write being prepared
        self.send_armed = False

    def update_term(self, term):
        self.term, self.voted_for = term, NOBODY
        self.write(TERM_KEY, term)
        self.write(VOTE_KEY, NOBODY)
        self.observe("term", term=term)

    def set_role(self, role):
        self.role = role
        if role == LEADER:
            self.observe("role", role=LEADER, term=self.term, token=self.token)
            self.reported_role = (LEADER, self.term)
            self.set_belief(self.me)
            return
        last = self.reported_role
        if last and last[0] == role and (role != CANDIDATE or last[1] == self.term):
            return  # as electsim's own nodes: once per change, a candidate once per term
        self.observe("role", role=role, term=self.term)
        self.reported_role = (role, self.term)

    def set_belief(self, leader):
        if self.reported_belief != (leader, self.term):
            self.observe("believe", leader=leader, term=self.term)
            self.reported_belief = (leader, self.term)

    def reset_election_timer(self):
        self.set_timer(ELECTION, self.rng.between(self.timeout_min, self.timeout_max))
        self.election_armed = True


def main():
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    node = Node(inp, out)
    out.write(b'{"type":"hello","protocol":1}\n')
    out.flush()
    handlers = {"start": node.on_start, "message": node.on_message, "timer": node.on_timer}
    for line in iter(inp.readline, b""):
        event = json.loads(line)
        handler = handlers.get(event.get("type"))
        if handler is not None:
            handler(event)
        out.write(b'{"type":"done"}\n')
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
