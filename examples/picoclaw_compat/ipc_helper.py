#!/usr/bin/env python3
"""A process hook that behaves as PicoClaw's own test helper does.

PicoClaw tests its process hooks with a helper in
pkg/agent/hook_process_test.go (runProcessHookHelper): this is the same
hook in Python, with the same environment and the same answers, written
only against PicoClaw's protocol (no SDK, integer ids):

- ``PICOCLAW_HOOK_MODE=rewrite``: before_llm sets the model to
  ``process-model``, after_llm appends ``|ipc`` to the content,
  before_tool sets the argument ``text`` to ``ipc``, after_tool prefixes
  ``for_llm`` with ``ipc:``; each sends the whole params object back under
  the stage's key with ``modify``.
- ``PICOCLAW_HOOK_MODE=deny``: approve_tool refuses, ``blocked by ipc hook``.
- the before_llm hooks of pkg/agent/hooks_test.go, as process hooks that
  send the whole request back: ``rewrite-system`` (llmSystemRewriteHook:
  model ``changed-model``, the first message's content ``rewritten
  system``), ``append-user`` (llmUserAppendHook: a user message ``extra
  user context`` appended), ``json-append-user``
  (llmJSONRoundTripUserAppendHook: the request round-tripped as Go's
  ``omitempty`` writes it, empty fields dropped, then ``json extra user
  context`` appended), ``rewrite-tool`` (llmToolRewriteHook: model
  ``changed-model``, the first tool's description ``rewritten tool``, a
  tool ``hook_tool`` added).
- any other mode: ``continue`` everywhere and approval.
- ``PICOCLAW_HOOK_EVENT_LOG``: each runtime event's kind is written there
  (the file holds the last one).

hello answers ``{"ok": true}``; an unknown method is error -32601.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

MODE = os.environ.get("PICOCLAW_HOOK_MODE", "")
EVENT_LOG = os.environ.get("PICOCLAW_HOOK_EVENT_LOG", "")


def rewrite(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The rewrite mode's answer at an interceptor stage."""
    if method == "hook.before_llm":
        return {"action": "modify", "request": {**params, "model": "process-model"}}
    if method == "hook.after_llm":
        response = params.get("response")
        if isinstance(response, dict) and isinstance(response.get("content"), str):
            response["content"] += "|ipc"
        return {"action": "modify", "response": params}
    if method == "hook.before_tool":
        arguments = params.get("arguments")
        if not isinstance(arguments, dict):
            arguments = {}
        params["arguments"] = {**arguments, "text": "ipc"}
        return {"action": "modify", "call": params}
    result = params.get("result")
    if isinstance(result, dict) and isinstance(result.get("for_llm"), str):
        result["for_llm"] = "ipc:" + result["for_llm"]
    return {"action": "modify", "result": params}


def without_empty(value: Any) -> Any:
    """``value`` as Go's ``omitempty`` writes it back: empty fields dropped."""
    if isinstance(value, dict):
        return {k: without_empty(v) for k, v in value.items() if v not in (None, "", [], {})}
    if isinstance(value, list):
        return [without_empty(v) for v in value]
    return value


def before_llm(params: dict[str, Any]) -> dict[str, Any] | None:
    """The answer of the hooks_test.go before_llm hook named by the mode."""
    request = dict(params)
    messages = [dict(m) for m in request.get("messages") or []]
    tools = [dict(t) for t in request.get("tools") or []]
    if MODE == "rewrite-system":
        request["model"] = "changed-model"
        messages[0]["content"] = "rewritten system"
    elif MODE == "append-user":
        messages.append({"role": "user", "content": "extra user context"})
    elif MODE == "json-append-user":
        messages = without_empty(messages)
        messages.append({"role": "user", "content": "json extra user context"})
    elif MODE == "rewrite-tool":
        request["model"] = "changed-model"
        tools[0]["function"] = {**tools[0]["function"], "description": "rewritten tool"}
        tools.append({"type": "function", "function": {
            "name": "hook_tool", "description": "hook tool", "parameters": {"type": "object"}}})
    else:
        return None
    request["messages"] = messages
    if tools:
        request["tools"] = tools
    return {"action": "modify", "request": request}


def answer(method: str, params: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The result or the error for one request."""
    if method == "hook.hello":
        return {"ok": True}, None
    if method == "hook.before_llm" and (rewritten := before_llm(params)) is not None:
        return rewritten, None
    if method in ("hook.before_llm", "hook.after_llm", "hook.before_tool", "hook.after_tool"):
        return (rewrite(method, params) if MODE == "rewrite" else {"action": "continue"}), None
    if method == "hook.approve_tool":
        if MODE == "deny":
            return {"approved": False, "reason": "blocked by ipc hook"}, None
        return {"approved": True}, None
    return None, {"code": -32601, "message": "method not found"}


def note_event(params: dict[str, Any]) -> None:
    """Writes the event's kind to the event log, replacing what was there."""
    kind = params.get("kind")
    if EVENT_LOG and isinstance(kind, str):
        with open(EVENT_LOG, "w", encoding="utf-8") as log:
            log.write(kind + "\n")


def main() -> int:
    for line in sys.stdin:
        message = json.loads(line)
        message_id = message.get("id") or 0
        params = message.get("params")
        if not isinstance(params, dict):
            params = {}
        if message_id == 0:
            if message.get("method") == "hook.runtime_event":
                note_event(params)
            continue
        result, error = answer(str(message.get("method") or ""), params)
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": int(message_id)}
        if error is not None:
            reply["error"] = error
        else:
            reply["result"] = result
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
