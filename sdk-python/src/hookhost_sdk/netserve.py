"""Serve an :class:`~hookhost_sdk.App` over WebSocket and HTTP on one TCP port.

This is the server side of spec section 2.2: a ``GET`` with ``Upgrade:
websocket`` opens a WebSocket session (one JSON-RPC message per text frame,
a fresh session per connection); any other ``POST`` carries one JSON-RPC
message and gets its answer as the response body.

Why hand-written: the SDK is standard library only, so that a hook stays one
file plus this package wherever Python 3.11 runs. The part of RFC 6455 and
HTTP/1.1 a hook needs is small: text frames, fragmentation, ping, close;
one POST, one message, keep-alive. What it leaves out, on purpose: TLS (put
a proxy or balancer in front for ``wss://``/``https://``), extensions such
as compression, subprotocols, and concurrency within one HTTP connection
(pipelined requests are served one after another).

Who may connect (the Rust SDK applies the same rules, in the same order):
a request or upgrade with an ``Origin`` header, which browsers send and
hosts do not, is refused with 403, since any web page may reach
``127.0.0.1``; with a token (``--token-file``, ``token=``), one without
``Authorization: Bearer TOKEN`` is refused with 401; a ``POST`` that is not
``Content-Type: application/json`` with 415. Each refusal logs one line.

Dispatch is :mod:`hookhost_sdk.server`'s, shared with stdio: same checks,
error codes, worker pool, event order and cancellation. Every socket write
happens on the loop thread; answers finished on worker threads are handed
over with ``call_soon_threadsafe``, so frames never interleave.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hmac
import logging
import socket
import struct
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from ._netcommon import BINARY, CLOSE, CONT, PING, PONG, TEXT, accept_key, check_token, read_token_file, xor_mask
from ._aio import Loop
from .server import Runtime, Send, Session, _Job

if TYPE_CHECKING:
    from .app import App

__all__ = ["MAX_MESSAGE_BYTES", "check_token", "parse_address", "read_token_file", "serve"]

log = logging.getLogger("hookhost_sdk")

#: The largest WebSocket message (all fragments) or HTTP body accepted.
#: Params carry whole conversations, so this is generous; the host's own
#: default line limit is 4 MiB.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024

_MAX_HEAD = 64 * 1024  # request line and headers; also a chunk-size line
_LINGER = 1.0  # seconds to drain a peer after refusing it (see _linger)
_CLOSE_WAIT = 0.3  # seconds connections get at shutdown to finish closing
_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    405: "Method Not Allowed",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    426: "Upgrade Required",
    431: "Request Header Fields Too Large",
}


def parse_address(address: str) -> tuple[str | None, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6; an empty host is every interface)."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"expected HOST:PORT, got {address!r}")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    return host or None, int(port)


async def serve(app: App, address: str, *, max_message_bytes: int | None = None, token: str | None = None) -> None:
    """Serve ``app`` on ``address`` until SIGTERM or SIGINT.

    Prints ``listening on ws://HOST:PORT`` (the port actually bound, so port
    0 works) on stdout once bound. ``max_message_bytes`` defaults to
    :data:`MAX_MESSAGE_BYTES` as it is at call time. With ``token`` (see
    :func:`check_token`), every request and upgrade must carry
    ``Authorization: Bearer TOKEN``.
    """
    host, port = parse_address(address)
    limit = MAX_MESSAGE_BYTES if max_message_bytes is None else max_message_bytes
    secret = None if token is None else check_token(token).encode()
    await _Server(app, limit, secret).serve(_bind(host, port))


def _bind(host: str | None, port: int) -> socket.socket:
    # One socket from the first address: "localhost:0" must not bind 127.0.0.1
    # and ::1 on two different free ports.
    family, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
    except BaseException:
        sock.close()
        raise
    return sock


class _Server:
    def __init__(self, app: App, max_message: int, token: bytes | None) -> None:
        self.runtime = Runtime(app)
        self.max_message = max_message
        self.token = token
        self.conns: set[_Connection] = set()
        self.stopping = False
        self.loop_thread = threading.get_ident()

    async def serve(self, sock: socket.socket) -> None:
        runtime = self.runtime
        aio = Loop(runtime)
        runtime.start()
        try:
            server = await asyncio.start_server(self._accept, sock=sock, limit=_MAX_HEAD)
            host, port = sock.getsockname()[:2]
            print(f"listening on ws://{f'[{host}]' if ':' in host else host}:{port}", flush=True)
            await aio.stop.wait()
            self.stopping = True
            server.close()
            await aio.drain()
            await asyncio.sleep(0)  # answers handed over by workers reach their transports
            for conn in list(self.conns):
                conn.shutdown()
            tasks = [conn.task for conn in self.conns]
            if tasks:
                await asyncio.wait(tasks, timeout=_CLOSE_WAIT)
            for conn in list(self.conns):
                conn.writer.transport.abort()
        finally:
            runtime.close()
            aio.close()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _Connection(self, reader, writer).run()

    def threadsafe(self, fn: Callable[[bytes], None]) -> Send:
        """``fn`` made callable from any thread: it always runs on the loop."""
        loop = asyncio.get_running_loop()

        def send(data: bytes) -> None:
            if threading.get_ident() == self.loop_thread:
                fn(data)
                return
            try:
                loop.call_soon_threadsafe(fn, data)
            except RuntimeError:
                pass  # the loop has closed: nobody is left to answer

        return send


class _Fail(Exception):
    """Ends a WebSocket connection with a close code (RFC 6455 section 7.4)."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code


class _Connection:
    def __init__(self, server: _Server, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.server = server
        self.runtime = server.runtime
        self.reader = reader
        self.writer = writer
        task = asyncio.current_task()
        assert task is not None
        self.task: asyncio.Task[object] = task
        self.idle = True  # between HTTP requests: safe to drop at shutdown
        self.websocket = False
        self.close_sent = False
        server.conns.add(self)

    async def run(self) -> None:
        try:
            await self._http()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.CancelledError, ConnectionError):
            pass  # the peer went away or broke HTTP, or shutdown dropped an idle connection
        except Exception:
            log.exception("hookhost_sdk: connection failed")
        finally:
            self.server.conns.discard(self)
            self.writer.close()

    def shutdown(self) -> None:
        if self.websocket:
            self._close(1001, "going away")  # the read loop ends on the reply or EOF
        elif self.idle:
            self.task.cancel()
        # A busy HTTP connection closes after its answer (server.stopping).

    # --- HTTP ------------------------------------------------------------------

    async def _http(self) -> None:
        while not self.server.stopping:
            self.idle = True
            try:
                head = await self.reader.readuntil(b"\r\n\r\n")
            except asyncio.LimitOverrunError:
                return await self._refuse(431, "request head too large")
            self.idle = False
            request = _parse_head(head)
            if request is None:
                return await self._refuse(400, "malformed request")
            method, version, headers = request
            refusal = _refusal(method, headers, self.server.token)
            if refusal is not None:
                return await self._refuse(*refusal)
            if method == "GET" and "websocket" in _tokens(headers.get("upgrade", "")):
                return await self._upgrade(headers)
            if method != "POST":
                return await self._refuse(405, "POST a JSON-RPC message, or GET with Upgrade: websocket")
            connection = _tokens(headers.get("connection", ""))
            keep_alive = "keep-alive" in connection if version == "HTTP/1.0" else "close" not in connection
            body = await self._body(headers)
            if body is None:
                return
            answer = await self._exchange(body)
            keep_alive = keep_alive and not self.server.stopping
            self._respond(200, answer, keep_alive)
            await self.writer.drain()
            if not keep_alive:
                return

    async def _body(self, headers: dict[str, str]) -> bytes | None:
        """The request body, or ``None`` after refusing the request."""
        limit = self.server.max_message
        chunked = "transfer-encoding" in headers
        if chunked and _tokens(headers["transfer-encoding"])[-1:] != ["chunked"]:
            await self._refuse(400, "unsupported Transfer-Encoding")
            return None
        length = headers.get("content-length", "0")
        if not chunked and (not length.isdigit() or int(length) > limit):
            await self._refuse(413 if length.isdigit() else 400, f"the body limit is {limit} bytes")
            return None
        if headers.get("expect", "").lower() == "100-continue":
            self.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        if not chunked:
            return await self.reader.readexactly(int(length))
        parts: list[bytes] = []
        size = 0
        while True:
            try:
                n = int(((await self.reader.readuntil(b"\r\n")).split(b";")[0]).strip(), 16)
            except (ValueError, asyncio.LimitOverrunError):
                n = -1
            if n < 0 or size + n > limit:
                await self._refuse(400 if n < 0 else 413, "bad chunk" if n < 0 else f"the body limit is {limit} bytes")
                return None
            if n == 0:
                break
            chunk = await self.reader.readexactly(n + 2)
            parts.append(chunk[:-2])
            size += n
        while await self.reader.readuntil(b"\r\n") != b"\r\n":
            pass  # trailers: ignored
        return b"".join(parts)

    async def _exchange(self, body: bytes) -> bytes:
        """One message in, its answer out (empty for a notification)."""
        answer: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

        def settle(data: bytes) -> None:
            if not answer.done():
                answer.set_result(data)

        # A session per request: HTTP has no connection state, and two hosts
        # behind one balancer may well use the same ids at the same time.
        session = Session(self.runtime, self.server.threadsafe(settle))
        try:
            batch: list[_Job] = []
            kind = session.on_message(body, batch)
            self._start(batch)
            if kind in ("notification", "response"):
                return b""
            return _strip(await answer)
        finally:
            session.close()

    def _start(self, batch: list[_Job]) -> None:
        """Start the async jobs a message made, on this loop."""
        assert self.runtime.aio is not None
        self.runtime.aio.start(batch)

    def _respond(self, status: int, body: bytes, keep_alive: bool, extra: str = "") -> None:
        kind = "application/json" if status == 200 else "text/plain; charset=utf-8"
        head = f"HTTP/1.1 {status} {_REASONS[status]}\r\nContent-Length: {len(body)}\r\n{extra}"
        head += f"Content-Type: {kind}\r\n" if body else ""
        head += "" if keep_alive else "Connection: close\r\n"
        self.writer.writelines([f"{head}\r\n".encode("latin-1"), body])

    async def _refuse(self, status: int, reason: str, extra: str = "") -> None:
        allow = "Allow: POST, GET\r\n" if status == 405 else ""
        self._respond(status, reason.encode() + b"\n", False, allow + extra)
        await self._linger()

    async def _linger(self) -> None:
        """Close our side, then drop what the peer still sends, for a while.

        Closing a socket with unread input makes the kernel reset the
        connection, and a reset can destroy our last words (a close frame,
        a 413) before the peer has read them.
        """
        if self.writer.can_write_eof():
            self.writer.write_eof()
        try:
            async with asyncio.timeout(_LINGER):
                while await self.reader.read(1 << 16):
                    pass
        except (TimeoutError, ConnectionError):
            pass

    # --- WebSocket -------------------------------------------------------------

    async def _upgrade(self, headers: dict[str, str]) -> None:
        key = headers.get("sec-websocket-key", "")
        if "upgrade" not in _tokens(headers.get("connection", "")) or not _valid_key(key):
            return await self._refuse(400, "bad WebSocket upgrade request")
        if headers.get("sec-websocket-version") != "13":
            return await self._refuse(426, "WebSocket version 13 only", "Sec-WebSocket-Version: 13\r\n")
        accept = accept_key(key)
        self.writer.write(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + f"Sec-WebSocket-Accept: {accept}\r\n\r\n".encode()
        )
        self.websocket = True
        session = Session(self.runtime, self.server.threadsafe(self._send_text))
        try:
            await self._frames(session)
        except _Fail as fail:
            self._close(fail.code, str(fail))
            await self._linger()
        finally:
            session.close()

    async def _frames(self, session: Session) -> None:
        read = self.reader.readexactly
        limit = self.server.max_message
        parts: list[bytes] = []
        size = 0
        while True:
            b0, b1 = await read(2)
            fin, opcode, n = b0 & 0x80, b0 & 0x0F, b1 & 0x7F
            if n == 126:
                (n,) = struct.unpack("!H", await read(2))
            elif n == 127:
                (n,) = struct.unpack("!Q", await read(8))
            if b0 & 0x70:
                raise _Fail(1002, "reserved bits set, but no extension was negotiated")
            if not b1 & 0x80:
                raise _Fail(1002, "client frames must be masked")
            if opcode >= CLOSE:
                if opcode > PONG or not fin or n > 125:
                    raise _Fail(1002, "bad control frame")
            elif opcode == BINARY:
                raise _Fail(1003, "binary frames are not used: one JSON-RPC message per text frame")
            elif opcode > BINARY:
                raise _Fail(1002, f"unknown opcode {opcode}")
            elif (opcode == CONT) != bool(parts):
                raise _Fail(1002, "continuation frame out of place")
            elif size + n > limit:
                raise _Fail(1009, f"message over {limit} bytes")
            mask = await read(4)
            payload = xor_mask(await read(n), mask)
            if opcode == CLOSE:
                if len(payload) == 1:
                    raise _Fail(1002, "bad close frame")
                self._close(0, "", payload[:2])  # echo the peer's code, then hang up
                return
            if opcode == PING:
                if not self.close_sent:
                    self._frame(PONG, payload)
                continue
            if opcode == PONG:
                continue
            parts.append(payload)  # even when empty: a non-empty list means "in a message"
            size += n
            if not fin:
                continue
            message = parts[0] if len(parts) == 1 else b"".join(parts)
            parts, size = [], 0
            try:
                text = message.decode()
            except UnicodeDecodeError:
                raise _Fail(1007, "a text frame must be UTF-8") from None
            if self.close_sent or self.server.stopping:
                continue
            batch: list[_Job] = []
            session.on_message(text, batch)
            self._start(batch)

    def _send_text(self, data: bytes) -> None:
        if not self.close_sent and not self.writer.is_closing():
            self._frame(TEXT, memoryview(data)[:-1] if data.endswith(b"\n") else data)

    def _close(self, code: int, reason: str, raw: bytes | None = None) -> None:
        if not self.close_sent and not self.writer.is_closing():
            self.close_sent = True
            self._frame(CLOSE, raw if raw is not None else struct.pack("!H", code) + reason.encode()[:123])

    def _frame(self, opcode: int, payload: bytes | memoryview) -> None:
        n = len(payload)
        if n < 126:
            head = bytes((0x80 | opcode, n))
        elif n < 1 << 16:
            head = struct.pack("!BBH", 0x80 | opcode, 126, n)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 127, n)
        self.writer.writelines([head, payload])


def _parse_head(head: bytes) -> tuple[str, str, dict[str, str]] | None:
    """Method, version and headers (names lower-cased, repeats joined by commas)."""
    lines = head.decode("latin-1").lstrip("\r\n").split("\r\n")
    request = lines[0].split(" ")
    if len(request) != 3 or not request[2].startswith("HTTP/1."):
        return None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            return None
        name = name.lower()
        headers[name] = f"{headers[name]}, {value.strip()}" if name in headers else value.strip()
    return request[0], request[2], headers


def _refusal(method: str, headers: dict[str, str], token: bytes | None) -> tuple[int, str, str] | None:
    """Status, reason and extra header lines when a request may not be served (module docs)."""
    if "origin" in headers:
        log.warning("hookhost_sdk: refused a request with Origin %.200r (403)", headers["origin"])
        return 403, "refused: requests from web pages (with an Origin header) are not served", ""
    if token is not None and not _bearer_matches(headers.get("authorization"), token):
        why = "a wrong" if "authorization" in headers else "no"
        log.warning("hookhost_sdk: refused a request with %s token (401)", why)
        reason = "refused: send `Authorization: Bearer <token>` with the hook's token"
        return 401, reason, "WWW-Authenticate: Bearer\r\n"
    content_type = headers.get("content-type")
    if method == "POST" and not _is_json(content_type or ""):
        log.warning("hookhost_sdk: refused a POST with Content-Type %.200r (415)", content_type or "(none)")
        return 415, "refused: the body must be JSON, sent with Content-Type: application/json", ""
    return None


def _bearer_matches(value: str | None, token: bytes) -> bool:
    """Whether ``value`` is ``Bearer TOKEN`` (scheme in any case), compared in constant time."""
    raw = (value or "").encode("latin-1").strip(b" \t")
    cut = min((i for i in (raw.find(b" "), raw.find(b"\t")) if i >= 0), default=-1)
    if cut < 0 or raw[:cut].lower() != b"bearer":
        return False
    return hmac.compare_digest(raw[cut:].strip(b" \t"), token)


def _is_json(value: str) -> bool:
    """``application/json``, in any case, with or without parameters."""
    return value.split(";")[0].strip(" \t").lower() == "application/json"


def _tokens(value: str) -> list[str]:
    return [t.strip().lower() for t in value.split(",") if t.strip()]


def _valid_key(key: str) -> bool:
    try:
        return len(base64.b64decode(key, validate=True)) == 16
    except binascii.Error:
        return False


def _strip(data: bytes) -> bytes:
    return data[:-1] if data.endswith(b"\n") else data
