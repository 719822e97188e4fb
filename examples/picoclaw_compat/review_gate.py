#!/usr/bin/env python3
"""A process hook written for PicoClaw's documented protocol, with no SDK.

It answers hello with PicoClaw's `{"ok": true, "name": ...}` (no
declaration), approves every tool with `{"approved": true}`, continues at
every other stage with `{"action": "continue"}`, and at before_tool adds a
`timeout` argument to shell calls by sending back the whole call object, as
PicoClaw's replace-the-object `modify` expects. Runtime events are logged to
stderr.
"""

import json
import sys
from typing import Any

SHELL_TOOLS = {"shell", "bash", "exec"}


def handle_before_tool(params: dict[str, Any]) -> dict[str, Any]:
    arguments = params.get("arguments") or {}
    if params.get("tool") in SHELL_TOOLS and "timeout" not in arguments:
        call = dict(params)
        call["arguments"] = {**arguments, "timeout": 30}
        return {"action": "modify", "call": call}
    return {"action": "continue"}


def handle_request(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "hook.hello":
        return {"ok": True, "name": "python-review-gate"}
    if method == "hook.before_tool":
        return handle_before_tool(params)
    if method == "hook.approve_tool":
        return {"approved": True}
    if method in ("hook.before_llm", "hook.after_llm", "hook.after_tool"):
        return {"action": "continue"}
    raise KeyError(f"method not found: {method}")


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> int:
    for raw_line in sys.stdin:
        line = raw_line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except json.JSONDecodeError as exc:
            print(f"review_gate: bad line: {exc}", file=sys.stderr)
            continue
        method = str(message.get("method") or "")
        params = message.get("params") or {}
        if "id" not in message:  # a notification, such as hook.runtime_event
            if method == "hook.runtime_event":
                print(f"review_gate: observed event {params.get('kind')}", file=sys.stderr)
            continue
        try:
            send({"jsonrpc": "2.0", "id": message["id"], "result": handle_request(method, params)})
        except Exception as exc:
            send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32000, "message": str(exc)}})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
