#!/usr/bin/env python3
"""Answer repeated read-only tool calls from a cache instead of running them.

after_tool fills the cache; before_tool answers a call with the same tool
and the same arguments (compared as canonical JSON) with `respond` while the
entry is younger than CACHE_TTL_SECONDS (default 300). Only calls that
cannot change anything are cached: `read_file`, `list_dir`, and shell tools
running one simple command whose first word is cat, head, tail, ls, wc or
stat. Failed results are never cached.
"""

import json
import os
import threading
import time
from typing import Any

from hookhost_sdk import App, Decision, ToolCall, ToolOutput, respond

SHELL_TOOLS = {"shell", "bash", "Bash", "exec"}
READ_ONLY_TOOLS = {"read_file", "list_dir"}
READ_ONLY_COMMANDS = {"cat", "head", "tail", "ls", "wc", "stat"}
SHELL_SYNTAX = (";", "&", "|", ">", "<", "`", "$(", "\n")
TTL = float(os.environ.get("CACHE_TTL_SECONDS", "300"))

app = App("cache")
cache: dict[str, tuple[float, dict[str, Any]]] = {}
lock = threading.Lock()  # sync handlers run concurrently in a thread pool


def cache_key(call: ToolCall) -> str | None:
    """The cache key of a read-only call, or None when the call may write."""
    if call.tool in SHELL_TOOLS:
        command = call.arguments.get("command")
        if not isinstance(command, str) or any(s in command for s in SHELL_SYNTAX):
            return None
        words = command.split()
        if not words or words[0] not in READ_ONLY_COMMANDS:
            return None
    elif call.tool not in READ_ONLY_TOOLS:
        return None
    return json.dumps([call.tool, call.arguments], sort_keys=True, separators=(",", ":"))


@app.before_tool
def lookup(call: ToolCall) -> Decision | None:
    key = cache_key(call)
    if key is not None:
        with lock:
            entry = cache.get(key)
        if entry is not None and time.monotonic() - entry[0] < TTL:
            return respond(entry[1])
    return None


@app.after_tool
def store(output: ToolOutput) -> None:
    key = cache_key(output)
    if key is not None and not output.is_error:
        kept = {k: v for k, v in output.result.items() if k in ("for_llm", "for_user", "silent")}
        with lock:
            cache[key] = (time.monotonic(), kept)
    return None


if __name__ == "__main__":
    app.run()
