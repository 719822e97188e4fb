"""``Host.connect``: hookhost_sdk.host over WebSocket, to a running ``hookhost serve --listen``.

Most tests run the real binary (found as in test_host_client.py). A small
fake sidecar (:class:`FakeSidecar`) shows what the real one cannot: the
frames the client sends (masked, fragmented at 64 KiB, no Origin), its
answer to a ping, and refused or broken upgrades.
"""

from __future__ import annotations

import io
import json
import queue
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_host_client import BUILTINS, SHELL_LS, hookhost_bin, inline_config, write

from hookhost_sdk._netcommon import accept_key, xor_mask
from hookhost_sdk.host import Host, HostExited, HostRefused

pytestmark = pytest.mark.timeout(60)

TOKEN = "sidecar-token-42"


class Sidecar:
    """``hookhost serve -c CONFIG --listen 127.0.0.1:0 [ARGS]``; ``url`` is where it listens."""

    def __init__(self, config: Path, *args: str) -> None:
        argv = [hookhost_bin(), "serve", "-c", str(config), "--listen", "127.0.0.1:0", *args]
        self.stderr = tempfile.TemporaryFile()  # a file, not a pipe: nothing to drain while it runs
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.stderr, start_new_session=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode().strip()
        if not line.startswith("listening on ws://"):
            self.stop()
            self.stderr.seek(0)
            stderr = self.stderr.read().decode(errors="replace")
            pytest.fail(f"`hookhost serve --listen` did not start: {line!r}; stderr: {stderr}")
        self.url = line.removeprefix("listening on ")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


@pytest.fixture
def sidecar(tmp_path: Path) -> Iterator[Callable[..., Sidecar]]:
    started: list[Sidecar] = []

    def start(config: Path, *args: str) -> Sidecar:
        started.append(Sidecar(config, *args))
        return started[-1]

    yield start
    for one in started:
        one.stop()
        one.stderr.close()


def connect(url: str, **kw: Any) -> Host:
    kw.setdefault("stderr", io.StringIO())
    kw.setdefault("timeout", 30)
    return Host.connect(url, **kw)


# --- against the real sidecar ----------------------------------------------------


def test_calls_emit_reload_and_close_over_websocket(sidecar: Any, tmp_path: Path) -> None:
    served = sidecar(inline_config(tmp_path))
    host = connect(served.url)
    assert host.proc is None and [s["hook"] for s in host.stats()] == ["inline"]
    echoed = host.before_tool({"tool": "echo", "arguments": {"n": 7}})
    assert echoed.modified and echoed.params["arguments"]["echo"] == 7
    assert host.before_tool({"tool": "stop"}).aborted
    assert host.lifecycle("session_start").additional_context == "use tabs"
    host.emit("agent.turn.end", {"turn": 1})  # a notification: nothing comes back
    assert host.before_llm({"model": "rewrite", "messages": []}).modified  # and the session goes on
    assert host.reload()["unchanged"] == ["inline"]
    assert host.close() == 0
    with pytest.raises(HostExited, match="the Host is closed"):
        host.stats()
    with pytest.raises(HostExited, match="the Host is closed"):
        host.emit("agent.turn.end", {})
    assert host.close() == 0  # twice is fine
    # The sidecar runs on for other agents.
    assert served.proc.poll() is None
    with connect(served.url) as again:
        assert again.before_tool(SHELL_LS).action == "continue"


def test_a_1_mb_message_goes_out_fragmented_and_comes_back(sidecar: Any, tmp_path: Path) -> None:
    served = sidecar(inline_config(tmp_path))
    big = "x" * (1 << 20)
    with connect(served.url) as host:
        verdict = host.before_tool({"tool": "echo", "arguments": {"n": big}})
        assert verdict.params["arguments"]["echo"] == big


def test_concurrent_calls_over_one_connection_get_their_own_answers(sidecar: Any, tmp_path: Path) -> None:
    served = sidecar(inline_config(tmp_path))
    answers: dict[int, Any] = {}
    with connect(served.url) as host:

        def call(n: int) -> None:
            answers[n] = host.before_tool({"tool": "slow", "arguments": {"n": n, "seconds": 0.05}})

        threads = [threading.Thread(target=call, args=(n,)) for n in range(30)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    assert {n: v.params["arguments"]["echo"] for n, v in answers.items()} == {n: n for n in range(30)}


def test_a_sidecar_that_stops_fails_waiting_calls_at_once(sidecar: Any, tmp_path: Path) -> None:
    served = sidecar(inline_config(tmp_path))
    host = connect(served.url)
    failure: list[BaseException] = []

    def wait() -> None:
        try:
            host.before_tool({"tool": "slow", "arguments": {"n": 1, "seconds": 30}})
        except BaseException as exc:
            failure.append(exc)

    caller = threading.Thread(target=wait)
    caller.start()
    time.sleep(0.3)
    served.stop()
    caller.join(10)
    assert failure and isinstance(failure[0], HostExited), failure
    assert "before answering" in str(failure[0]) and served.url in str(failure[0])
    with pytest.raises(HostExited):
        host.stats()
    host.close()


def test_a_token_is_required_and_sent(sidecar: Any, tmp_path: Path) -> None:
    # Pending the sidecar's --token-file (hookhost serve, being hardened in
    # parallel): its contract is 401 on a missing or wrong token.
    token_file = tmp_path / "sidecar.token"
    token_file.write_text(f"  {TOKEN}\n", encoding="utf-8")
    served = sidecar(write(tmp_path, BUILTINS), "--token-file", str(token_file))
    for kw in ({}, {"token": "wrong"}):
        with pytest.raises(HostRefused) as refused:
            connect(served.url, **kw)
        assert refused.value.status == 401 and "401" in str(refused.value), kw
    for kw in ({"token": TOKEN}, {"token_file": token_file}):
        with connect(served.url, **kw) as host:
            assert host.before_tool(SHELL_LS).denied


def test_token_arguments_are_checked_before_connecting(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_text("\n")
    with pytest.raises(ValueError, match="the file is empty"):
        Host.connect("ws://127.0.0.1:9", token_file=empty)
    with pytest.raises(ValueError, match="not both"):
        Host.connect("ws://127.0.0.1:9", token="a", token_file=empty)
    with pytest.raises(ValueError, match="ws://"):
        Host.connect("http://127.0.0.1:9")


# --- against a fake sidecar -----------------------------------------------------


class FakeSidecar:
    """Accepts one connection: answers the upgrade with ``status`` (and ``accept``), then,
    after 101, pings, records every frame and answers each request with empty stats."""

    def __init__(self, status: str = "101 Switching Protocols", accept: str | None = None, body: bytes = b"") -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"ws://127.0.0.1:{self.listener.getsockname()[1]}/agents"
        self.head: bytes = b""
        self.frames: list[tuple[bool, int, bool, int]] = []  # fin, opcode, masked, length
        self.messages: queue.Queue[bytes] = queue.Queue()
        self.pong: bytes | None = None
        self._status, self._accept, self._body = status, accept, body
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        self.conn = conn
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            self.buf += conn.recv(4096)
        self.head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        key = next(line.split(b":", 1)[1].strip() for line in self.head.split(b"\r\n") if b"Sec-WebSocket-Key" in line)
        accept = self._accept if self._accept is not None else accept_key(key.decode())
        extra = f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n"
        if not self._status.startswith("101"):
            extra = f"Content-Length: {len(self._body)}\r\nConnection: close\r\n"
        conn.sendall(f"HTTP/1.1 {self._status}\r\n{extra}\r\n".encode() + self._body)
        if self._status.startswith("101"):
            self._frames()

    def _take(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.conn.recv(1 << 16)
            if not chunk:
                raise EOFError
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def _frames(self) -> None:
        parts: list[bytes] = []
        self.conn.sendall(bytes((0x89, 4)) + b"ping")
        try:
            while True:
                b0, b1 = self._take(2)
                n = b1 & 0x7F
                if n >= 126:
                    (n,) = struct.unpack("!H" if n == 126 else "!Q", self._take(2 if n == 126 else 8))
                mask = self._take(4) if b1 & 0x80 else b"\0\0\0\0"
                payload = xor_mask(self._take(n), mask)
                fin, opcode = bool(b0 & 0x80), b0 & 0x0F
                self.frames.append((fin, opcode, bool(b1 & 0x80), n))
                if opcode == 10:
                    self.pong = payload
                elif opcode == 8:
                    self.conn.sendall(bytes((0x88, 2)) + payload[:2])
                    return
                elif opcode in (0, 1):
                    parts.append(payload)
                    if fin:
                        self._answer(b"".join(parts))
                        parts = []
        except (EOFError, OSError):
            pass

    def _answer(self, message: bytes) -> None:
        self.messages.put(message)
        request = json.loads(message)
        if "id" in request:
            answer = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"hooks": []}}).encode()
            self.conn.sendall(bytes((0x81, len(answer))) + answer if len(answer) < 126 else b"")


def test_frames_are_masked_fragmented_at_64_kib_and_carry_no_origin() -> None:
    fake = FakeSidecar()
    host = connect(fake.url, token=f" {TOKEN} ")
    head = fake.head.decode("latin-1")
    assert head.startswith("GET /agents HTTP/1.1\r\n")
    assert f"\r\nAuthorization: Bearer {TOKEN}" in head and "origin" not in head.lower()
    fake.messages.get(timeout=5)  # the stats call of connect()
    fake.frames.clear()
    params = {"tool": "t", "arguments": {"blob": "y" * (1 << 20)}}
    assert host.request("host.stats", params) == {"hooks": []}
    data_frames = [f for f in fake.frames if f[1] in (0, 1)]  # the pong may land among them
    fin, opcodes, masked, sizes = zip(*data_frames, strict=True)
    assert opcodes[0] == 1 and set(opcodes[1:]) == {0}  # text, then continuations
    assert fin[-1] and not any(fin[:-1]) and all(masked)
    assert max(sizes) <= 64 * 1024 and sum(sizes) > 1 << 20 and len(sizes) == -(-sum(sizes) // (64 * 1024))
    assert json.loads(fake.messages.get(timeout=5))["params"] == params
    assert fake.pong == b"ping"  # the sidecar's ping was answered
    assert host.close() == 0


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_upgrade_raises_host_refused_with_its_status(status: int) -> None:
    reason = {401: "Unauthorized", 403: "Forbidden"}[status]
    fake = FakeSidecar(f"{status} {reason}", body=b"refused: go away\n")
    with pytest.raises(HostRefused) as refused:
        connect(fake.url)
    assert refused.value.status == status and isinstance(refused.value, ConnectionError)
    assert f"HTTP {status} {reason}" in str(refused.value) and "refused: go away" in str(refused.value)


def test_a_wrong_sec_websocket_accept_is_refused() -> None:
    fake = FakeSidecar(accept="d3Jvbmc=")
    with pytest.raises(ConnectionError, match="not a valid WebSocket handshake"):
        connect(fake.url)
