"""The WebSocket link of :meth:`hookhost_sdk.host.Host.connect`: a small RFC 6455 client.

Client side only, and only what talking to ``hookhost serve --listen`` needs:
the upgrade (with ``Authorization: Bearer`` when there is a token, never an
``Origin``), masked text messages split into frames of at most
:data:`FRAGMENT_BYTES` (the sidecar caps frames, not messages), answers
reassembled from any fragmentation, ping answered with pong, and the close
handshake. Request/answer matching is :class:`~hookhost_sdk.host.Host`'s,
shared with the stdio link.
"""

from __future__ import annotations

import base64
import os
import socket
import struct
import sys
import threading
import urllib.parse
from collections.abc import Callable
from typing import TextIO

from ._netcommon import BINARY, CLOSE, CONT, PING, PONG, TEXT, accept_key, xor_mask

#: The largest frame sent; a longer message goes out in continuation frames.
FRAGMENT_BYTES = 64 * 1024
#: The largest answer accepted (all its fragments); past it the connection is closed with 1009.
MAX_ANSWER_BYTES = 64 * 1024 * 1024
_MAX_HEAD = 64 * 1024
_HINTS = {
    401: "the token is missing or wrong: pass token= or token_file= with the sidecar's token",
    403: "the sidecar refuses requests with an Origin header, or this client",
}


class HostRefused(ConnectionError):
    """The sidecar answered the WebSocket upgrade with an HTTP error (``status``), e.g. 401 or 403."""

    def __init__(self, url: str, status: int, reason: str, body: str) -> None:
        text = f"{url}: hookhost refused the connection: HTTP {status} {reason}".rstrip()
        if status in _HINTS:
            text += f" ({_HINTS[status]})"
        if body:
            text += f": {body}"
        super().__init__(text)
        self.url = url
        self.status = status
        self.reason = reason
        self.body = body


class _ProtocolError(Exception):
    """The sidecar broke RFC 6455: close with ``code``."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code


class WebSocketLink:
    """One WebSocket connection to the sidecar; make one with :meth:`open`."""

    proc = None

    def __init__(self, sock: socket.socket, buffered: bytes, url: str, sink: TextIO | None) -> None:
        self.url = url
        self._sock = sock
        self._buf = bytearray(buffered)
        self._sink = sink
        self._write_lock = threading.Lock()
        self._close_sent = False
        self._close_received = False
        self._why = "the connection closed"
        self._reader: threading.Thread | None = None

    @classmethod
    def open(cls, url: str, token: str | None, timeout: float, sink: TextIO | None) -> WebSocketLink:
        """Connect and upgrade; :class:`HostRefused` when the sidecar answers with an HTTP error."""
        host, port, path, authority = _parse_url(url)
        sock = socket.create_connection((host, port), timeout=timeout)
        try:
            key = base64.b64encode(os.urandom(16)).decode()
            sock.sendall(_upgrade_request(authority, path, key, token))
            head, rest = _read_head(sock, url)
            _check_upgrade(url, head, rest, key)
            sock.settimeout(None)
        except BaseException:
            sock.close()
            raise
        return cls(sock, rest, url, sink)

    # --- the link interface (see hookhost_sdk.host) ----------------------------

    def start(self, deliver: Callable[[bytes], None], ended: Callable[[], None]) -> None:
        self._reader = threading.Thread(target=self._read, args=(deliver, ended), daemon=True)
        self._reader.start()

    def send(self, message: bytes) -> bool:
        """Send one text message, fragmented; False when the connection is closing or gone."""
        data = b"".join(_frames(TEXT, message))
        with self._write_lock:
            if self._close_sent:
                return False
            try:
                self._sock.sendall(data)
            except OSError:
                return False
        return True

    def close(self, timeout: float) -> int:
        """The close handshake: 0 when the sidecar answered it, else 1."""
        self._send_close(1000, b"")
        if self._reader is not None:
            self._reader.join(timeout)
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        if self._reader is not None:
            self._reader.join(1.0)
        return 0 if self._close_received else 1

    def exit_info(self) -> tuple[int | None, str, str | None]:
        return None, "", f"{self._why} ({self.url})"

    # --- reading ----------------------------------------------------------------

    def _read(self, deliver: Callable[[bytes], None], ended: Callable[[], None]) -> None:
        try:
            self._read_messages(deliver)
        except _ProtocolError as exc:
            self._why = f"the sidecar broke the WebSocket protocol: {exc}"
            self._log(f"hookhost_sdk.host: {self._why}; closing with {exc.code}\n")
            self._send_close(exc.code, str(exc).encode()[:123])
        except (OSError, EOFError):
            pass
        finally:
            ended()

    def _read_messages(self, deliver: Callable[[bytes], None]) -> None:
        parts: list[bytes] = []
        kind = TEXT
        size = 0
        while True:
            fin, opcode, payload = self._read_frame()
            if opcode >= CLOSE:
                if self._control(opcode, payload):
                    return
                continue
            if (opcode == CONT) != bool(parts):
                raise _ProtocolError(1002, "continuation frame out of place")
            kind = kind if opcode == CONT else opcode
            size += len(payload)
            if size > MAX_ANSWER_BYTES:
                raise _ProtocolError(1009, f"an answer over {MAX_ANSWER_BYTES} bytes")
            parts.append(payload)
            if not fin:
                continue
            message, parts, size = b"".join(parts), [], 0
            if kind == TEXT:
                deliver(message)
            else:
                self._log("hookhost_sdk.host: ignoring a binary message from hookhost\n")

    def _control(self, opcode: int, payload: bytes) -> bool:
        """Handle a control frame; True when it ends the connection (a close)."""
        if opcode == PING:
            with self._write_lock:
                if not self._close_sent:
                    self._sock.sendall(_frame(PONG, payload, True))
            return False
        if opcode == CLOSE:
            self._close_received = True
            code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
            self._why = f"hookhost closed the connection ({code} {payload[2:].decode(errors='replace')})".rstrip()
            self._send_close(code if code != 1005 else 1000, b"")
            return True
        return False  # a pong

    def _read_frame(self) -> tuple[bool, int, bytes]:
        b0, b1 = self._take(2)
        fin, opcode, n = bool(b0 & 0x80), b0 & 0x0F, b1 & 0x7F
        if n == 126:
            (n,) = struct.unpack("!H", self._take(2))
        elif n == 127:
            (n,) = struct.unpack("!Q", self._take(8))
        if b0 & 0x70 or b1 & 0x80:
            raise _ProtocolError(1002, "reserved bits or a mask on a server frame")
        if opcode >= CLOSE and (opcode > PONG or not fin or n > 125):
            raise _ProtocolError(1002, "bad control frame")
        if opcode not in (CONT, TEXT, BINARY) and opcode < CLOSE:
            raise _ProtocolError(1002, f"unknown opcode {opcode}")
        if n > MAX_ANSWER_BYTES:
            raise _ProtocolError(1009, f"a frame over {MAX_ANSWER_BYTES} bytes")
        return fin, opcode, self._take(n)

    def _take(self, n: int) -> bytes:
        """Exactly ``n`` bytes; memory grows with what arrives, not with what a header announces."""
        while len(self._buf) < n:
            chunk = self._sock.recv(min(n - len(self._buf), 1 << 20))
            if not chunk:
                raise EOFError
            self._buf += chunk
        data = bytes(self._buf[:n])
        del self._buf[:n]
        return data

    # --- writing ----------------------------------------------------------------

    def _send_close(self, code: int, reason: bytes) -> None:
        with self._write_lock:
            if self._close_sent:
                return
            self._close_sent = True
            try:
                self._sock.sendall(_frame(CLOSE, struct.pack("!H", code) + reason, True))
            except OSError:
                pass

    def _log(self, text: str) -> None:
        sink = self._sink if self._sink is not None else sys.stderr
        try:
            sink.write(text)
            sink.flush()
        except (OSError, ValueError):
            pass


def _parse_url(url: str) -> tuple[str, int, str, str]:
    """Host, port, request path and the ``Host`` header of a ``ws://`` URL."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "ws":
        raise ValueError(f"{url}: expected a ws:// URL (hookhost serve --listen speaks plain WebSocket)")
    if not parts.hostname or parts.username is not None:
        raise ValueError(f"{url}: expected ws://HOST:PORT")
    port = parts.port or 80
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.hostname, port, path, parts.netloc


def _upgrade_request(authority: str, path: str, key: str, token: str | None) -> bytes:
    auth = f"Authorization: Bearer {token}\r\n" if token is not None else ""
    return (
        f"GET {path} HTTP/1.1\r\nHost: {authority}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{auth}\r\n"
    ).encode("latin-1")


def _read_head(sock: socket.socket, url: str) -> tuple[bytes, bytes]:
    """The upgrade answer's head, and what came after it."""
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > _MAX_HEAD:
            raise ConnectionError(f"{url}: the answer to the upgrade has no end of head in {_MAX_HEAD} bytes")
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError(f"{url}: hookhost closed the connection during the WebSocket upgrade")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _check_upgrade(url: str, head: bytes, rest: bytes, key: str) -> None:
    lines = head.decode("latin-1").split("\r\n")
    status_line = lines[0].split(" ", 2)
    if len(status_line) < 2 or not status_line[0].startswith("HTTP/1.") or not status_line[1].isdigit():
        raise ConnectionError(f"{url}: not an HTTP answer to the WebSocket upgrade: {lines[0][:200]!r}")
    status = int(status_line[1])
    if status != 101:
        reason = status_line[2] if len(status_line) > 2 else ""
        raise HostRefused(url, status, reason, rest.decode(errors="replace").strip()[:200])
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    upgrade = headers.get("upgrade", "").lower() == "websocket"
    connection = "upgrade" in [t.strip().lower() for t in headers.get("connection", "").split(",")]
    if not (upgrade and connection and headers.get("sec-websocket-accept") == accept_key(key)):
        raise ConnectionError(f"{url}: the answer to the upgrade is not a valid WebSocket handshake")


def _frames(opcode: int, payload: bytes) -> list[bytes]:
    """``payload`` as one message: frames of at most :data:`FRAGMENT_BYTES`, continuations after the first."""
    chunks = [payload[i : i + FRAGMENT_BYTES] for i in range(0, len(payload), FRAGMENT_BYTES)] or [b""]
    last = len(chunks) - 1
    return [_frame(opcode if i == 0 else CONT, chunk, i == last) for i, chunk in enumerate(chunks)]


def _frame(opcode: int, payload: bytes, fin: bool) -> bytes:
    """One masked client frame."""
    b0 = (0x80 if fin else 0) | opcode
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", b0, 0x80 | n)
    elif n < 1 << 16:
        head = struct.pack("!BBH", b0, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", b0, 0x80 | 127, n)
    mask = os.urandom(4)
    return head + mask + xor_mask(payload, mask)
