#!/usr/bin/env python3
"""approve_tool: let only the tools on an allowlist run.

The allowlist is a TOML file with `allow = ["tool", ...]`, at the path in
APPROVAL_ALLOWLIST (default `approval_allowlist.toml` in the working
directory), read once at start. A missing or broken file stops the hook at
start, so with `on_error = "deny"` the host refuses every tool: fail closed.
"""

import os
import sys
import tomllib

from hookhost_sdk import App, Decision, ToolCall, approve, refuse

PATH = os.environ.get("APPROVAL_ALLOWLIST", "approval_allowlist.toml")
try:
    with open(PATH, "rb") as f:
        ALLOW = frozenset(tomllib.load(f).get("allow", []))
except (OSError, tomllib.TOMLDecodeError) as exc:
    sys.exit(f"approval: cannot read the allowlist {PATH}: {exc}")

app = App("approval")


@app.approve_tool
def approval(call: ToolCall) -> Decision:
    if call.tool in ALLOW:
        return approve()
    return refuse(f"approval: tool `{call.tool}` is not on the allowlist")


if __name__ == "__main__":
    app.run()
