"""What `serve --state redis://` adds to a prompt hook's call.

One gateway on loopback with a prompt hook that has a session token cap
(`session_token_cap`, cache off), against a fake OpenAI-API provider that
answers at once; N Claude Code PreToolUse events over one keep-alive
connection, timed one by one, first without `--state`, then with a real
Redis (Debian's redis-server) as the shared store: each call then reads
and charges the session's spend in Redis (two round trips) and fetches the
hook's shared breaker view once a second.

usage: python3 bench/shared_state.py [--bin target/release/hookhost] [-n 2000]
"""

import argparse
import http.client
import http.server
import json
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

ANSWER = {
    "choices": [{"message": {"role": "assistant", "tool_calls": [{
        "id": "c1", "type": "function",
        "function": {"name": "decide", "arguments": json.dumps({"decision": "allow", "reason": ""})},
    }]}}],
    "usage": {"prompt_tokens": 10, "completion_tokens": 2},
}


class Provider(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        # Headers and body go out as two writes: without this, Nagle's
        # algorithm and the client's delayed ACK add 40 ms to each answer.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.dumps(ANSWER).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gateway(binary, config, state):
    args = [binary, "serve", "-c", str(config), "--listen", "127.0.0.1:0"]
    if state:
        args += ["--state", state]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    addr = proc.stdout.readline().strip().split("//", 1)[1].rstrip("/")
    return proc, addr


def run(addr, n):
    host, port = addr.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port))
    times = []
    for i in range(n + 50):
        event = {
            "session_id": f"s{i % 50}", "transcript_path": "/t", "cwd": "/tmp",
            "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": f"ls {i}"},
        }
        body = json.dumps(event)
        start = time.perf_counter()
        conn.request("POST", "/hooks/claude-code", body, {"Content-Type": "application/json", "Host": "localhost"})
        reply = conn.getresponse()
        reply.read()
        took = time.perf_counter() - start
        assert reply.status == 200
        if i >= 50:
            times.append(took * 1000)
    conn.close()
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.9)], times[int(len(times) * 0.99)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/hookhost")
    ap.add_argument("-n", type=int, default=2000)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    provider = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Provider)
    threading.Thread(target=provider.serve_forever, daemon=True).start()
    config = tmp / "hooks.toml"
    config.write_text(f"""
[hooks.prompts.judge]
provider = "openai"
base_url = "http://127.0.0.1:{provider.server_address[1]}/v1"
model = "m"
prompt = "Judge. $ARGUMENTS"
events = ["PreToolUse"]
matcher = "Bash"
session_token_cap = 1000000000
cache_ttl_ms = 0
""")
    port = free_port()
    redis = subprocess.Popen(
        [shutil.which("redis-server") or "/usr/bin/redis-server", "--port", str(port), "--save", "",
         "--appendonly", "no", "--dir", str(tmp)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    time.sleep(0.3)
    try:
        for label, state in [("no --state", None), ("--state redis", f"redis://127.0.0.1:{port}")]:
            proc, addr = gateway(args.bin, config, state)
            try:
                p50, p90, p99 = run(addr, args.n)
            finally:
                proc.terminate()
                proc.wait()
            print(f"{label:14} n={args.n}  p50 {p50:.3f} ms  p90 {p90:.3f} ms  p99 {p99:.3f} ms")
    finally:
        redis.terminate()
        redis.wait()
        provider.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
