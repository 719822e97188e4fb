"""A fake Anthropic Messages API on loopback, so that the real Claude Code
runs offline: its first turn with the Bash tool on offer calls Bash with a
chosen command; once a tool result is back (or with no Bash on offer) it
answers "done". Streams server-sent events when asked to, as the API does.
Every request body is kept for the test to read."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def turn(body: dict[str, Any], command: str) -> tuple[list[dict[str, Any]], str]:
    """The assistant's next turn: its content blocks and stop reason."""
    answered = any(
        isinstance(m.get("content"), list) and any(p.get("type") == "tool_result" for p in m["content"])
        for m in body.get("messages", [])
    )
    offers_bash = any(t.get("name") == "Bash" for t in body.get("tools", []))
    if offers_bash and not answered:
        call = {"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": {"command": command, "description": "as asked"}}
        return [call], "tool_use"
    return [{"type": "text", "text": "done"}], "end_turn"


def events(content: list[dict[str, Any]], stop: str) -> Iterator[dict[str, Any]]:
    """The server-sent events of one streamed turn."""
    yield {
        "type": "message_start",
        "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": [],
                    "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}},
    }
    for i, block in enumerate(content):
        if block["type"] == "text":
            start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield {"type": "content_block_start", "index": i, "content_block": start}
        yield {"type": "content_block_delta", "index": i, "delta": delta}
        yield {"type": "content_block_stop", "index": i}
    yield {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 1}}
    yield {"type": "message_stop"}


class FakeClaudeApi:
    """The server: `url` for ANTHROPIC_BASE_URL, `requests` as received."""

    def __init__(self, command: str) -> None:
        self.requests: list[dict[str, Any]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"{}")
                if not self.path.startswith("/v1/messages"):
                    self.send_response(404)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                api.requests.append(body)
                content, stop = turn(body, command)
                if body.get("stream"):
                    kind = "text/event-stream"
                    payload = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events(content, stop))
                else:
                    kind = "application/json"
                    payload = json.dumps({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
                                          "content": content, "stop_reason": stop, "stop_sequence": None,
                                          "usage": {"input_tokens": 1, "output_tokens": 1}})
                data = payload.encode()
                self.send_response(200)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def tool_results(self) -> list[Any]:
        """Every tool result Claude Code sent back, in order."""
        return [
            part
            for body in self.requests
            for m in body.get("messages", [])
            if isinstance(m.get("content"), list)
            for part in m["content"]
            if part.get("type") == "tool_result"
        ]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
