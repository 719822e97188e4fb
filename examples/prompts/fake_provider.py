#!/usr/bin/env python3
"""A stand-in model provider for trying prompt hooks offline.

Serves the OpenAI chat-completions API (``/v1/chat/completions``) and the
Anthropic Messages API (``/v1/messages``) on loopback, and always answers
with the forced ``decide`` call: ``deny`` when the event mentions
``rm -rf``, ``allow`` otherwise. Prints ``listening on http://HOST:PORT``
once bound. Standard library only.
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def decide(text: str) -> dict[str, str]:
    if "rm -rf" in text:
        return {"decision": "deny", "reason": "rm -rf deletes files beyond recovery"}
    return {"decision": "allow", "reason": "nothing destructive"}


def openai_answer(args: dict[str, str]) -> dict[str, Any]:
    call = {"id": "call_1", "type": "function", "function": {"name": "decide", "arguments": json.dumps(args)}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {
        "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}],
        "usage": {"prompt_tokens": 180, "completion_tokens": 24},
    }


def anthropic_answer(args: dict[str, str]) -> dict[str, Any]:
    block = {"type": "tool_use", "id": "toolu_1", "name": "decide", "input": args}
    return {
        "type": "message",
        "role": "assistant",
        "stop_reason": "tool_use",
        "content": [block],
        "usage": {"input_tokens": 180, "output_tokens": 24},
    }


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
        length = int(self.headers.get("content-length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        args = decide(json.dumps(body.get("messages", [])))
        answer = anthropic_answer(args) if self.path.endswith("/messages") else openai_answer(args)
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


def main() -> None:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"listening on http://127.0.0.1:{server.server_port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
