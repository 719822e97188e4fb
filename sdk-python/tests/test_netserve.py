"""The SDK serving WebSocket and HTTP on one port (``--listen``), spec 2.2.

Each test writes a small hook script, starts it as a process with
``--listen 127.0.0.1:0``, reads the ``listening on ws://...`` line and talks
to it with the tiny stdlib clients below: :class:`Ws` (RFC 6455, enough to
also send what a good client never would) and ``http.client``.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import queue
import signal
import socket
import struct
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "python"
GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
EXIT_BOUND = 3.0  # generous for a small, noisy machine; the target is ~1 s
TEXT, BINARY, CLOSE, PING, PONG = 1, 2, 8, 9, 10

pytestmark = pytest.mark.timeout(30)

HEADER = """\
import asyncio, os, sys, threading, time
from hookhost_sdk import *
from hookhost_sdk import netserve
app = App("probe")
"""

CALL = {"tool": "shell", "arguments": {"command": "ls"}}
JSON = {"Content-Type": "application/json"}
HELLO = {"name": "probe", "version": 1, "host": {"name": "test", "version": "0"}}


def tool(command: str) -> dict[str, Any]:
    return {"tool": "shell", "arguments": {"command": command}}


class NetHook:
    """A hook process serving the network; ``port`` is the one it printed."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.stderr_path = cwd / f"stderr-{id(self)}.txt"
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=err)
        lines: queue.Queue[bytes] = queue.Queue()
        assert self.proc.stdout is not None
        stdout = self.proc.stdout

        def pump() -> None:
            for line in iter(stdout.readline, b""):
                lines.put(line)

        threading.Thread(target=pump, daemon=True).start()
        self.lines = lines
        try:
            self.first_line = lines.get(timeout=10).decode()
        except queue.Empty:
            raise AssertionError(f"no listening line; stderr: {self.stderr()}") from None
        assert self.first_line.startswith("listening on ws://127.0.0.1:"), (self.first_line, self.stderr())
        self.port = int(self.first_line.strip().rsplit(":", 1)[1])

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10) -> tuple[int, float]:
        started = time.monotonic()
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout)
        return code, time.monotonic() - started

    def http_conn(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)

    def post(self, message: Any, conn: http.client.HTTPConnection | None = None) -> tuple[int, bytes]:
        own = conn is None
        conn = conn or self.http_conn()
        body = message if isinstance(message, bytes) else json.dumps(message).encode()
        conn.request("POST", "/hook", body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        data = response.read()
        if own:
            conn.close()
        return response.status, data


class Ws:
    """A minimal WebSocket client: frames in, frames out, answers by id."""

    def __init__(self, port: int, hello: bool = True, headers: dict[str, str] | None = None) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
        self.sock.sendall(
            f"GET /hook HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"{extra}Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        accept = base64.b64encode(hashlib.sha1(key.encode() + GUID).digest())
        assert head.startswith(b"HTTP/1.1 101 ") and b"Sec-WebSocket-Accept: " + accept in head, head
        self.stash: list[dict[str, Any]] = []
        self.next_id = 0
        if hello:
            self.hello_result = self.request("hook.hello", HELLO)["result"]

    def _fill(self) -> None:
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise EOFError("the server closed the connection")
        self.buf += chunk

    def _take(self, n: int) -> bytes:
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def frame(self, opcode: int, payload: bytes, fin: bool = True, masked: bool = True) -> None:
        n = len(payload)
        b0 = (0x80 if fin else 0) | opcode
        mbit = 0x80 if masked else 0
        if n < 126:
            head = struct.pack("!BB", b0, mbit | n)
        elif n < 1 << 16:
            head = struct.pack("!BBH", b0, mbit | 126, n)
        else:
            head = struct.pack("!BBQ", b0, mbit | 127, n)
        if masked:
            mask = os.urandom(4)
            payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            head += mask
        self.sock.sendall(head + payload)

    def recv_frame(self) -> tuple[int, bytes]:
        b0, b1 = self._take(2)
        assert not b1 & 0x80, "server frames are never masked"
        assert b0 & 0x80, "this server does not fragment"
        n = b1 & 0x7F
        if n == 126:
            (n,) = struct.unpack("!H", self._take(2))
        elif n == 127:
            (n,) = struct.unpack("!Q", self._take(8))
        return b0 & 0x0F, self._take(n)

    def close_code(self) -> int:
        """Read frames until the server's close frame; return its code."""
        while True:
            opcode, payload = self.recv_frame()
            if opcode == CLOSE:
                return int(struct.unpack("!H", payload[:2])[0]) if payload else 1005

    def send(self, message: Any) -> None:
        self.frame(TEXT, json.dumps(message).encode())

    def start(self, method: str, params: Any, msg_id: Any = None) -> Any:
        if msg_id is None:
            self.next_id += 1
            msg_id = self.next_id
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return msg_id

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def recv(self) -> dict[str, Any]:
        opcode, payload = self.recv_frame()
        assert opcode == TEXT, (opcode, payload)
        message: dict[str, Any] = json.loads(payload)
        return message

    def response(self, msg_id: Any) -> dict[str, Any]:
        while True:
            for message in self.stash:
                if message.get("id") == msg_id and type(message.get("id")) is type(msg_id):
                    self.stash.remove(message)
                    return message
            self.stash.append(self.recv())

    def request(self, method: str, params: Any, msg_id: Any = None) -> dict[str, Any]:
        return self.response(self.start(method, params, msg_id))

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Any]:
    hooks: list[NetHook] = []

    def start(body: str, args: tuple[str, ...] = ("--listen", "127.0.0.1:0"), run: str = "app.run()") -> NetHook:
        script = tmp_path / f"hook{len(hooks)}.py"
        script.write_text(HEADER + textwrap.dedent(body) + f"\n{run}\n")
        hook = NetHook([sys.executable, str(script), *args], tmp_path, env())
        hooks.append(hook)
        return hook

    yield start
    for hook in hooks:
        if hook.proc.poll() is None:
            hook.proc.kill()
        hook.proc.wait()


def env() -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(SRC)}


GUARD = """
@app.before_tool
def guard(call):
    return deny("no " + call.arguments["command"]) if call.arguments["command"].startswith("rm") else None
@app.after_llm
def bad(resp):
    return respond("x")
"""


def test_hello_and_calls_over_websocket_and_http_on_one_port(spawn: Any) -> None:
    hook = spawn(GUARD)
    assert hook.first_line == f"listening on ws://127.0.0.1:{hook.port}\n"
    expected = {"name": "probe", "version": 1, "intercept": ["after_llm", "before_tool"], "observe": []}
    ws = Ws(hook.port)
    assert ws.hello_result == expected
    assert ws.request("hook.before_tool", tool("rm -rf /"))["result"] == {"action": "deny_tool", "reason": "no rm -rf /"}
    # The same checks as stdio: results are validated, errors keep their codes.
    bad = ws.request("hook.after_llm", {"model": "m", "response": {}})["error"]
    assert bad["code"] == -32603 and "respond() is not allowed at after_llm" in bad["message"]
    assert ws.request("hook.frobnicate", {})["error"]["code"] == -32601
    assert ws.request("hook.before_tool", {"tool": 5})["error"]["code"] == -32602

    hello = {"jsonrpc": "2.0", "id": "h", "method": "hook.hello", "params": HELLO}
    status, body = hook.post(hello)
    assert status == 200 and json.loads(body) == {"jsonrpc": "2.0", "id": "h", "result": expected}
    status, body = hook.post({"jsonrpc": "2.0", "id": 9, "method": "hook.before_tool", "params": tool("ls")})
    assert json.loads(body) == {"jsonrpc": "2.0", "id": 9, "result": {"action": "continue"}}
    ws.close()
    assert hook.stop()[0] == 0


def test_app_run_listen_argument_and_listen_equals_flag(spawn: Any) -> None:
    by_argument = spawn(GUARD, args=(), run='app.run(listen="127.0.0.1:0")')
    by_flag = spawn(GUARD, args=("--listen=127.0.0.1:0",))
    for hook in (by_argument, by_flag):
        assert Ws(hook.port).hello_result["name"] == "probe"
        assert hook.stop()[0] == 0


def test_a_bad_listen_address_is_a_usage_error(tmp_path: Path) -> None:
    script = tmp_path / "hook.py"
    script.write_text(HEADER + GUARD + "\napp.run()\n")
    done = subprocess.run([sys.executable, str(script), "--listen", "nowhere"], env=env(), capture_output=True, timeout=10)
    assert done.returncode == 2 and b"HOST:PORT" in done.stderr and done.stdout == b""


def test_concurrent_requests_are_answered_by_id_in_any_order(spawn: Any) -> None:
    hook = spawn(
        """
        release = asyncio.Event()
        gate = threading.Event()
        @app.before_tool
        async def a(call):
            if call.arguments["command"] == "wait":
                await release.wait()
                return deny("released")
            release.set()
            return None
        @app.after_tool
        def b(out):
            if out.for_llm == "wait":
                return modify_result(for_llm="gate " + str(gate.wait(20)))
            gate.set()
            return None
        """
    )
    ws = Ws(hook.port)
    waiting = ws.start("hook.before_tool", tool("wait"), msg_id="w")
    sync_waiting = ws.start("hook.after_tool", {"tool": "t", "result": {"for_llm": "wait"}}, msg_id=7)
    time.sleep(0.1)
    releasing = ws.start("hook.before_tool", tool("go"), msg_id="g")
    sync_releasing = ws.start("hook.after_tool", {"tool": "t", "result": {"for_llm": "go"}}, msg_id=8)
    got = [ws.recv() for _ in range(4)]
    ids = [m["id"] for m in got]
    assert ids.index(releasing) < ids.index(waiting) and ids.index(sync_releasing) < ids.index(sync_waiting)
    answers = {m["id"]: m["result"] for m in got}
    assert answers["w"] == {"action": "deny_tool", "reason": "released"}
    assert answers[7]["result"] == {"result": {"for_llm": "gate True"}}


def test_runtime_events_are_handled_in_order_and_never_answered(spawn: Any, tmp_path: Path) -> None:
    out = tmp_path / "events.txt"
    hook = spawn(
        f"""
        log = open({str(out)!r}, "a")
        @app.on_event("agent.tool.*")
        def tool(event):
            time.sleep(0.01)
            log.write("tool " + event.kind + "\\n"); log.flush()
        @app.on_event("llm.*")
        async def other(event):
            log.write("other " + event.kind + "\\n"); log.flush()
        @app.before_tool
        def a(call): return None
        """
    )
    ws = Ws(hook.port)
    assert ws.hello_result["observe"] == ["agent.tool.*", "llm.*"]
    kinds = ["agent.tool.a", "llm.b", "agent.tool.c", "agent.turn", "llm.d", "agent.tool.e"]
    for n, kind in enumerate(kinds):
        ws.notify("hook.runtime_event", {"id": f"e{n}", "kind": kind, "time": "t", "payload": {}})
    final = ws.start("hook.before_tool", CALL)
    assert ws.recv()["id"] == final  # the first frame after the events: they got no answer
    expected = ["tool agent.tool.a", "other llm.b", "tool agent.tool.c", "other llm.d", "tool agent.tool.e"]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(out.read_text().splitlines()) < len(expected):
        time.sleep(0.02)
    assert out.read_text().splitlines() == expected


def test_cancel_request_answers_minus_32800_and_cancels_the_handler(spawn: Any) -> None:
    hook = spawn(
        """
        @app.before_tool
        async def a(call):
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                print("handler saw the cancellation", file=sys.stderr, flush=True)
                raise
        """
    )
    ws = Ws(hook.port)
    slow = ws.start("hook.before_tool", CALL, msg_id="slow")
    time.sleep(0.1)
    ws.notify("$/cancel_request", {"id": "slow"})
    assert ws.response(slow)["error"] == {"code": -32800, "message": "request cancelled"}
    ws.notify("$/cancel_request", {"id": "slow"})  # already answered: ignored
    ws.frame(PING, b"after")
    assert ws.recv_frame() == (PONG, b"after")  # and nothing was sent before it
    deadline = time.monotonic() + 5
    while "handler saw the cancellation" not in hook.stderr() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert "handler saw the cancellation" in hook.stderr()


def test_each_connection_is_its_own_session(spawn: Any) -> None:
    hook = spawn(
        """
        @app.before_tool
        async def a(call):
            await asyncio.sleep(float(call.arguments["command"]))
            return deny(call.arguments["command"])
        """
    )
    one, two = Ws(hook.port), Ws(hook.port)  # a hello on each
    # The same id in flight on both: no "already in flight" clash.
    one.start("hook.before_tool", tool("30"), msg_id=1)
    two.start("hook.before_tool", tool("0.2"), msg_id=1)
    time.sleep(0.05)
    # A cancel reaches only its own connection's request.
    one.notify("$/cancel_request", {"id": 1})
    assert one.response(1)["error"]["code"] == -32800
    assert two.response(1)["result"] == {"action": "deny_tool", "reason": "0.2"}
    # Closing one connection leaves the other serving.
    one.close()
    assert two.request("hook.before_tool", tool("0"))["result"]["reason"] == "0"
    # A new connection starts over, with its own hello.
    assert Ws(hook.port).request("hook.before_tool", tool("0"), msg_id=1)["result"]["reason"] == "0"


def test_ping_is_answered_with_pong_and_close_is_echoed(spawn: Any) -> None:
    hook = spawn(GUARD)
    ws = Ws(hook.port)
    ws.frame(PING, b"are you there")
    assert ws.recv_frame() == (PONG, b"are you there")
    ws.frame(PONG, b"unsolicited")  # ignored
    ws.frame(CLOSE, struct.pack("!H", 1000) + b"bye")
    assert ws.recv_frame() == (CLOSE, struct.pack("!H", 1000))
    assert ws.sock.recv(10) == b""  # then the server hangs up


def test_a_fragmented_message_with_a_ping_between_fragments(spawn: Any) -> None:
    hook = spawn(GUARD)
    ws = Ws(hook.port)
    data = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "hook.before_tool", "params": tool("rm x" + "y" * 70000)})
    raw = data.encode()
    ws.frame(TEXT, raw[:10], fin=False)
    ws.frame(0, raw[10:20000], fin=False)
    ws.frame(PING, b"p")
    ws.frame(0, b"", fin=False)
    ws.frame(0, raw[20000:], fin=True)
    assert ws.recv_frame() == (PONG, b"p")
    assert ws.response(5)["result"]["reason"] == "no rm x" + "y" * 70000


@pytest.mark.parametrize(
    ("send", "code"),
    [
        (lambda ws: ws.frame(BINARY, b'{"jsonrpc":"2.0"}'), 1003),
        (lambda ws: ws.frame(TEXT, b'{"jsonrpc":"2.0"}', masked=False), 1002),
        (lambda ws: ws.frame(0, b"{}"), 1002),  # a continuation with no message
        (lambda ws: ws.frame(TEXT, b"\xff\xfe"), 1007),
        # Only the header of a 64 MiB + 1 frame: refused before its payload.
        (lambda ws: ws.sock.sendall(struct.pack("!BBQ", 0x81, 0xFF, 64 * 1024 * 1024 + 1) + b"mask"), 1009),
    ],
    ids=["binary", "unmasked", "stray-continuation", "bad-utf8", "oversized"],
)
def test_protocol_violations_close_the_connection_with_their_code(spawn: Any, send: Any, code: int) -> None:
    hook = spawn(GUARD)
    ws = Ws(hook.port)
    send(ws)
    assert ws.close_code() == code
    with pytest.raises((EOFError, ConnectionError)):
        ws.recv_frame()
    assert Ws(hook.port).request("hook.before_tool", CALL)["result"] == {"action": "continue"}  # serving goes on


def test_the_message_limit_counts_all_fragments_and_is_a_module_constant(spawn: Any) -> None:
    hook = spawn(GUARD + "\nnetserve.MAX_MESSAGE_BYTES = 1000\n")
    ws = Ws(hook.port)
    ws.frame(TEXT, b"x" * 600, fin=False)
    ws.frame(0, b"x" * 600, fin=True)
    assert ws.close_code() == 1009
    status, body = hook.post(b"x" * 1001)
    assert status == 413


def test_http_keep_alive_serves_two_requests_on_one_connection(spawn: Any) -> None:
    hook = spawn(GUARD)
    conn = hook.http_conn()
    status, body = hook.post({"jsonrpc": "2.0", "id": 1, "method": "hook.hello", "params": HELLO}, conn)
    assert status == 200 and json.loads(body)["result"]["name"] == "probe"
    sock = conn.sock
    status, body = hook.post({"jsonrpc": "2.0", "id": 2, "method": "hook.before_tool", "params": tool("rm")}, conn)
    assert json.loads(body)["result"]["reason"] == "no rm"
    assert sock is not None and conn.sock is sock  # the same TCP connection
    # Connection: close is honoured: the answer, then the server hangs up.
    raw = socket.create_connection(("127.0.0.1", hook.port), timeout=10)
    body = b'{"jsonrpc":"2.0","id":3,"method":"hook.x","params":{}}'
    head = b"POST / HTTP/1.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
    raw.sendall(head % len(body) + body)
    received = b""
    while chunk := raw.recv(4096):
        received += chunk
    head, _, answer = received.partition(b"\r\n\r\n")
    assert b"Connection: close" in head and json.loads(answer)["error"]["code"] == -32601


def test_http_bad_json_notifications_chunked_bodies_and_refusals(spawn: Any) -> None:
    hook = spawn(GUARD)
    status, body = hook.post(b"this is not json")
    assert status == 200 and json.loads(body) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "parse error: the message is not JSON"},
    }
    conn = hook.http_conn()
    event = json.dumps({"jsonrpc": "2.0", "method": "hook.runtime_event", "params": {}})
    conn.request("POST", "/", body=event, headers=JSON)
    response = conn.getresponse()
    assert (response.status, response.read(), response.getheader("Content-Length")) == (200, b"", "0")
    message = json.dumps({"jsonrpc": "2.0", "id": 4, "method": "hook.before_tool", "params": tool("rm")}).encode()
    conn.request("POST", "/", body=iter([message[:7], message[7:]]), headers=JSON, encode_chunked=True)
    response = conn.getresponse()
    assert response.getheader("Content-Type") == "application/json"
    assert json.loads(response.read())["result"]["reason"] == "no rm"
    for method in ("GET", "PUT", "DELETE"):
        conn = hook.http_conn()
        conn.request(method, "/")
        response = conn.getresponse()
        assert response.status == 405 and "POST" in (response.getheader("Allow") or "")
    conn = hook.http_conn()
    conn.putrequest("POST", "/")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", str(64 * 1024 * 1024 + 1))
    conn.endheaders()  # no body: the answer comes before it
    assert conn.getresponse().status == 413


def test_concurrent_http_requests_on_several_connections(spawn: Any) -> None:
    hook = spawn(
        """
        release = asyncio.Event()
        @app.before_tool
        async def a(call):
            if call.arguments["command"] == "wait":
                await release.wait()
            else:
                release.set()
            return deny(call.arguments["command"])
        """
    )
    results: dict[str, Any] = {}

    def call(command: str) -> None:
        status, body = hook.post({"jsonrpc": "2.0", "id": 1, "method": "hook.before_tool", "params": tool(command)})
        results[command] = json.loads(body)["result"]["reason"]

    waiters = [threading.Thread(target=call, args=("wait",)) for _ in range(3)]
    for thread in waiters:
        thread.start()
    time.sleep(0.2)
    assert results == {}  # all three are held, each on its own connection, same id
    call("go")
    for thread in waiters:
        thread.join(10)
    assert results == {"wait": "wait", "go": "go"}


STUCK = """
@app.before_tool
def stuck(call):
    time.sleep(30)
@app.after_tool
async def stuck_async(out):
    await asyncio.sleep(30)
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_closes_connections_with_1001_and_exits_0_promptly(spawn: Any, sig: int) -> None:
    hook = spawn(STUCK)
    ws = Ws(hook.port)
    ws.start("hook.before_tool", CALL)
    cancelled = ws.start("hook.after_tool", {"tool": "t", "result": {"for_llm": "x"}})
    idle_http = hook.http_conn()
    idle_http.connect()
    time.sleep(0.2)
    code, elapsed = hook.stop(sig)
    assert code == 0 and elapsed < EXIT_BOUND, (code, elapsed, hook.stderr())
    # The async handler is cancelled (-32800); the stuck sync one is abandoned.
    assert ws.response(cancelled)["error"]["code"] == -32800
    assert ws.close_code() == 1001
    assert idle_http.sock is not None and idle_http.sock.recv(1) == b""
    assert hook.lines.empty()  # nothing but the listening line on stdout


@pytest.mark.skipif(not (EXAMPLES / "guard.py").exists(), reason="examples/python is not here")
def test_the_example_guard_serves_with_the_listen_flag(tmp_path: Path) -> None:
    hook = NetHook([sys.executable, str(EXAMPLES / "guard.py"), "--listen", "127.0.0.1:0"], tmp_path, env())
    try:
        ws = Ws(hook.port)
        assert ws.hello_result["intercept"] == ["before_tool"]
        assert ws.request("hook.before_tool", tool("sudo ls"))["result"]["action"] == "deny_tool"
        assert hook.stop()[0] == 0
    finally:
        hook.proc.kill()
        hook.proc.wait()


# --- who may connect: Origin, Content-Type, the token -----------------------

HELLO_CALL = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "hook.hello", "params": HELLO})
TOKEN = "s3cret-token"


def post_with(
    port: int, headers: dict[str, str], body: str = HELLO_CALL
) -> tuple[int, http.client.HTTPResponse, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("POST", "/", body=body.encode(), headers=headers)
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, response, data


def upgrade(port: int, headers: dict[str, str]) -> tuple[int, bytes]:
    """An upgrade request with ``headers`` added: the status and the whole response head."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    extra = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        f"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n{extra}"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    sock.close()
    return int(head.split(b" ")[1]), head


def write_token(tmp_path: Path, text: str) -> str:
    path = tmp_path / "token"
    path.write_text(text)
    return str(path)


def test_an_upgrade_with_an_origin_is_refused_403(spawn: Any) -> None:
    hook = spawn(GUARD)
    for origin in ("https://evil.example", "null", f"http://127.0.0.1:{hook.port}"):
        status, head = upgrade(hook.port, {"Origin": origin})
        assert status == 403, head
    assert "refused a request with Origin 'https://evil.example' (403)" in hook.stderr()
    assert Ws(hook.port).hello_result["name"] == "probe"  # without one, as hosts connect


def test_a_post_with_an_origin_is_refused_403(spawn: Any) -> None:
    hook = spawn(GUARD)
    for kind in ("application/json", "text/plain"):  # text/plain: what a page may send without a preflight
        status, _, body = post_with(hook.port, {"Origin": "https://evil.example", "Content-Type": kind})
        assert status == 403 and b"Origin" in body, (status, body)


def test_a_post_that_is_not_application_json_is_refused_415(spawn: Any) -> None:
    hook = spawn(GUARD)
    refused = ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; b=x", "application/json-rpc")
    for kind in (None, *refused):
        status, _, body = post_with(hook.port, {} if kind is None else {"Content-Type": kind})
        assert status == 415 and b"application/json" in body, (kind, status, body)
    for kind in ("application/json; charset=utf-8", 'Application/JSON ; charset="UTF-8"'):
        status, _, body = post_with(hook.port, {"Content-Type": kind})
        assert status == 200 and json.loads(body)["result"]["name"] == "probe", (kind, body)


def test_with_a_token_a_post_without_it_or_with_a_wrong_one_is_refused_401(spawn: Any, tmp_path: Path) -> None:
    hook = spawn(GUARD, args=("--listen", "127.0.0.1:0", "--token-file", write_token(tmp_path, TOKEN)))
    for auth in (None, "Bearer wrong", "Bearer s3cret-toke", "Bearer s3cret-token2", "Basic s3cret-token", TOKEN):
        headers = dict(JSON) if auth is None else {**JSON, "Authorization": auth}
        status, response, _ = post_with(hook.port, headers)
        assert status == 401 and response.getheader("WWW-Authenticate") == "Bearer", (auth, status)


def test_with_a_token_an_upgrade_without_it_or_with_a_wrong_one_is_refused_401(spawn: Any, tmp_path: Path) -> None:
    hook = spawn(GUARD, args=("--listen", "127.0.0.1:0", "--token-file", write_token(tmp_path, TOKEN)))
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": f"Basic {TOKEN}"}):
        status, head = upgrade(hook.port, headers)
        assert status == 401 and b"WWW-Authenticate: Bearer\r\n" in head, (headers, head)


def test_with_a_token_the_right_one_is_served_over_both_transports(spawn: Any, tmp_path: Path) -> None:
    hook = spawn(GUARD, args=("--token-file=" + write_token(tmp_path, f"\n  {TOKEN} \n"), "--listen", "127.0.0.1:0"))
    status, _, body = post_with(hook.port, {**JSON, "Authorization": f"bearer {TOKEN}"})  # trimmed; any case
    assert status == 200 and json.loads(body)["result"]["name"] == "probe"
    ws = Ws(hook.port, headers={"Authorization": f"Bearer {TOKEN}"})
    assert ws.request("hook.before_tool", tool("rm x"))["result"]["reason"] == "no rm x"
    # Origin comes first: the right token does not let a web page in.
    status, _ = upgrade(hook.port, {"Authorization": f"Bearer {TOKEN}", "Origin": "https://evil.example"})
    assert status == 403


def test_app_run_takes_a_token_argument(spawn: Any) -> None:
    hook = spawn(GUARD, args=(), run=f'app.run(listen="127.0.0.1:0", token=" {TOKEN} ")')
    assert post_with(hook.port, JSON)[0] == 401
    assert post_with(hook.port, {**JSON, "Authorization": f"Bearer {TOKEN}"})[0] == 200


@pytest.mark.parametrize(
    ("content", "args", "says"),
    [
        (" \n", ("--listen", "127.0.0.1:0"), "the file is empty"),
        (None, ("--listen", "127.0.0.1:0"), "cannot read it"),
        ("two words", ("--listen", "127.0.0.1:0"), "printable ASCII"),
        (TOKEN, (), "--token-file goes with --listen"),
    ],
    ids=["empty", "missing", "spaces", "without-listen"],
)
def test_an_unusable_token_file_is_a_usage_error(
    tmp_path: Path, content: str | None, args: tuple[str, ...], says: str
) -> None:
    script = tmp_path / "hook.py"
    script.write_text(HEADER + GUARD + "\napp.run()\n")
    token = tmp_path / "token"
    if content is not None:
        token.write_text(content)
    argv = [sys.executable, str(script), *args, "--token-file", str(token)]
    done = subprocess.run(argv, env=env(), capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and says.encode() in done.stderr and done.stdout == b"", done


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_a_frame_header_announcing_16_mib_allocates_nothing_before_its_payload(spawn: Any) -> None:
    hook = spawn(GUARD)
    ws = Ws(hook.port)
    before = rss_kib(hook.proc.pid)
    ws.sock.sendall(struct.pack("!BBQ", 0x81, 0xFF, 16 * 1024 * 1024) + b"mask" + b"x" * 1024)
    time.sleep(0.5)
    grown = rss_kib(hook.proc.pid) - before
    assert grown < 4 * 1024, f"RSS grew by {grown} KiB on a 16 MiB header with 1 KiB of payload"
    ws.frame(PING, b"")  # lands inside the announced payload: no pong, the server is still waiting
    ws.sock.settimeout(0.3)
    with pytest.raises(TimeoutError):
        ws.recv_frame()
