#!/usr/bin/env python3
"""A webhook for hookhost's [hooks.webhooks]: Python's standard library only.

It receives a Claude Code PreToolUse event (the JSON a command hook reads on
stdin) and answers as such a hook would print on stdout: a deny for
`rm -rf`, an empty body (allow) otherwise. A request without the expected
bearer token gets a 401, which hookhost counts as a failure of the hook.

    WEBHOOK_TOKEN=s3cret python3 webhook_server.py [PORT]
"""

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

TOKEN = os.environ.get("WEBHOOK_TOKEN", "")


class Hook(BaseHTTPRequestHandler):
    def do_POST(self):
        if TOKEN and self.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self.answer(401, b"bad token")
        length = int(self.headers.get("Content-Length") or 0)
        event = json.loads(self.rfile.read(length) or b"{}")
        command = (event.get("tool_input") or {}).get("command", "")
        if "rm -rf" in command:
            reason = f"webhook: refusing {command!r}"
            body = {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": reason,
                }
            }
            return self.answer(200, json.dumps(body).encode())
        self.answer(200, b"")

    def answer(self, status, body):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8787
    HTTPServer(("127.0.0.1", port), Hook).serve_forever()
