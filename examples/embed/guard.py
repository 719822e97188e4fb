#!/usr/bin/env python3
"""A hook written against the raw protocol (no SDK): one JSON-RPC message per
line on stdin/stdout. It denies `sudo`, rewrites a bare `ls` to `ls -h`, and
approves every tool but `curl`."""

import json
import sys


def handle(method: str, params: dict) -> dict:
    if method == "hook.hello":
        return {"name": "guard", "version": 1,
                "intercept": ["before_tool", "approve_tool"], "observe": ["agent.*"]}
    command = params.get("arguments", {}).get("command", "")
    if method == "hook.before_tool":
        if command.split()[:1] == ["sudo"]:
            return {"action": "deny_tool", "reason": "guard: sudo is not allowed"}
        if command.strip() == "ls":
            return {"action": "modify", "call": {"arguments": {"command": "ls -h"}}}
        return {"action": "continue"}
    if method == "hook.approve_tool":
        if params.get("tool") == "curl":
            return {"approved": False, "reason": "guard: no network tools"}
        return {"approved": True}
    raise KeyError(method)


for line in sys.stdin:
    try:
        msg = json.loads(line)
        assert isinstance(msg, dict)
    except (ValueError, AssertionError):
        print(f"guard: skipped a malformed line: {line[:80]!r}", file=sys.stderr)
        continue
    if "id" not in msg:
        print(f"guard saw {msg.get('method')} {msg.get('params', {}).get('kind', '')}", file=sys.stderr)
        continue
    try:
        reply = {"jsonrpc": "2.0", "id": msg["id"], "result": handle(msg["method"], msg.get("params", {}))}
    except KeyError:
        reply = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "method not found"}}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
