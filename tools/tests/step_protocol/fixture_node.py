#!/usr/bin/env python3
"""A tiny node for the step protocol's tests, well-behaved or broken on purpose.

Modes: ok; two_leaders (nodes 0 and 1 both lead: a violation, not a protocol
error); nondeterministic; and protocol breaches: wrong_hello, exit, hang,
malformed, error, undeclared, no_such_node.

Well-behaved ("ok"): node 0 leads term = its boot count (read back from stable
storage, so a restart shows it survived) and pings the others every 100ms;
the others believe in it. Every other mode breaks one rule of the protocol.
"""
import json
import os
import sys
import time

mode = sys.argv[1] if len(sys.argv) > 1 else "ok"
out = sys.stdout


def emit(obj):
    out.write(json.dumps(obj, separators=(",", ":")) + "\n")


def done():
    emit({"type": "done"})
    out.flush()


if mode == "wrong_hello":
    emit({"type": "hello", "protocol": 2})
else:
    emit({"type": "hello", "protocol": 1})
out.flush()

node = None
for line in sys.stdin:
    event = json.loads(line)
    kind = event["type"]
    if kind == "start":
        node = event["node"]
        nodes = event["nodes"]
        if mode == "exit":
            sys.exit(3)
        if mode == "hang":
            time.sleep(3600)
        if mode == "malformed":
            out.write("this is not json\n")
            out.flush()
            continue
        if mode == "error":
            emit({"type": "error", "message": "cannot go on"})
            out.flush()
            continue
        if mode == "undeclared":
            emit({"type": "send", "to": (node + 1) % nodes, "msg": {"type": "fx.nothing", "a": 1}})
            done()
            continue
        if mode == "no_such_node":
            emit({"type": "send", "to": 99, "msg": {"type": "fx.ping", "term": 1}})
            done()
            continue
        emit({"type": "load", "key": "boots"})
        out.flush()
        stored = json.loads(sys.stdin.readline())["value"]
        boots = (stored or 0) + 1
        emit({"type": "persist", "key": "boots", "value": boots})
        if node == 0 or (mode == "two_leaders" and node == 1):
            emit({"type": "observe", "obs": {"type": "term", "term": boots}})
            emit({"type": "observe", "obs": {"type": "role", "role": 2, "term": boots, "token": boots}})
            emit({"type": "observe", "obs": {"type": "believe", "leader": 0, "term": boots}})
            # The nondeterministic mode draws its period from the OS, not the seed.
            period = 100_000_000 if mode != "nondeterministic" else 50_000_000 + int.from_bytes(os.urandom(2), "big")
            emit({"type": "set_timer", "id": 1, "delay": period})
        else:
            emit({"type": "observe", "obs": {"type": "role", "role": 0, "term": 0}})
        done()
    elif kind == "timer":
        for peer in range(1, nodes):
            emit({"type": "send", "to": peer, "msg": {"type": "fx.ping", "term": boots}})
        emit({"type": "set_timer", "id": 1, "delay": 100_000_000})
        done()
    elif kind == "message":
        msg = event["msg"]
        if msg["type"] == "fx.ping":
            emit({"type": "observe", "obs": {"type": "believe", "leader": event["from"], "term": msg["term"]}})
        done()
    else:
        done()
