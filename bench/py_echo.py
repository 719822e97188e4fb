"""Row 12's hook: the least a Python hook can be, with the stdlib only.

One json.loads and one json.dumps per line, a write and a flush per answer.
It answers hook.hello as the protocol asks (spec/protocol.md section 4.2,
the same declaration the Python SDK sends) and before_tool with continue;
notifications (no id) are read and left unanswered, and any other request
is answered -32601."""

import json
import sys

HELLO = {"name": "bench_py_echo", "version": 1, "intercept": ["before_tool"], "observe": []}
CONTINUE = {"action": "continue"}


def answer(msg):
    method = msg.get("method")
    if method == "hook.before_tool":
        return {"jsonrpc": "2.0", "id": msg["id"], "result": CONTINUE}
    if method == "hook.hello":
        return {"jsonrpc": "2.0", "id": msg["id"], "result": HELLO}
    error = {"code": -32601, "message": f"method not found: {method}"}
    return {"jsonrpc": "2.0", "id": msg["id"], "error": error}


def main():
    out = sys.stdout
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        out.write(json.dumps(answer(msg)) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
