"""Serving the protocol: one dispatch core, and the stdio transport on top of it.

The core is shared by every transport (stdio here, WebSocket and HTTP in
:mod:`hookhost_sdk.netserve`), so validation, error codes, result checks,
event order and cancellation cannot drift apart between them:

- A :class:`Runtime` is what one process shares: the pool of sync workers,
  the event thread, shutdown, and the asyncio loop when one is needed
  (:mod:`hookhost_sdk._aio`). There is one per ``serve``.
- A :class:`Session` is one conversation with a host: its request ids in
  flight and the function that sends its answers. Over stdio there is one;
  over the network, one per WebSocket connection and one per HTTP request,
  so two hosts that pick the same ids never collide.

Layout, chosen for throughput without giving up concurrency:

- Messages are dispatched where they are read (the stdio **reader thread**,
  or the loop for network connections). Cheap requests (hello, unknown
  methods, bad params, cancels) are answered right there. So a burst of
  lines costs one wake-up, not one thread hop per line.
- **Sync handlers** go to a bounded pool of daemon worker threads through a
  C-implemented queue. A worker sends its own answer: no hop back.
- **Async handlers** run as tasks on the asyncio loop of the thread that
  called :meth:`App.serve`; the reader hands them over once per chunk.
- **No asyncio unless needed.** Importing asyncio is most of what the SDK
  would add to a hook's start-up, so ``App.run()`` for a stdio hook whose
  handlers are all plain functions serves with threads alone
  (:meth:`Server.run`): the main thread waits for EOF or a signal, then
  lets pending work finish. One ``async`` handler, ``await app.serve()`` or
  the network transports bring in the loop (:meth:`Server.serve`); the
  dispatch is the same.
- **Event handlers** run on one thread, one event at a time, in arrival
  order (async ones are awaited on the loop), so an audit log keeps order,
  even with several connections.
- Over stdio every answer is one ``os.write`` of one whole line under a
  lock, so lines never interleave and nothing sits in a buffer.

Ownership rule for answers: a request id sits in its session's ``inflight``
until someone pops it; only the popper may answer. A handler that finishes
pops and sends its result; a ``$/cancel_request`` pops and sends -32800; a
session that closes pops everything and sends nothing. So every request is
answered at most once, and exactly once while its session is open.

Workers are daemon threads and are never joined: a sync handler stuck in a
system call cannot keep the process alive after stdin closes or SIGTERM.
"""

from __future__ import annotations

import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .results import to_wire
from .schema import ProtocolError, check_params
from .wire import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    Id,
    Kind,
    classify,
    encode_error,
    encode_result,
)

if TYPE_CHECKING:
    import asyncio
    import logging

    from ._aio import Loop
    from .app import App, Handler

_READ_SIZE = 1 << 16
_SPAWN_AFTER = 0.02  # seconds a queued sync job may wait before the pool grows
_DRAIN_POLL = 0.005  # seconds between checks for pending work at shutdown

#: Sends one encoded answer (a JSON line, newline included). Called from any
#: thread; it must be safe for that and must not raise.
Send = Callable[[bytes], None]


class _Job:
    __slots__ = ("id", "session", "handler", "params", "cancelled", "task", "queued_at")

    def __init__(self, msg_id: Id, session: Session, handler: Handler, params: dict[str, Any]) -> None:
        self.id = msg_id
        self.session = session
        self.handler = handler
        self.params = params
        self.cancelled = False
        self.task: asyncio.Task[None] | None = None
        self.queued_at = 0.0


class Runtime:
    """What all sessions of one serving process share."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.methods: dict[str, Handler] = {f"hook.{s}": h for s, h in app.stage_handlers.items()}
        self.sessions: set[Session] = set()
        self.jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self.events: queue.SimpleQueue[tuple[list[Handler], dict[str, Any]] | None] = queue.SimpleQueue()
        self.events_pending = 0
        self.events_lock = threading.Lock()
        self.backlog = threading.Event()
        self.last_dequeue = 0.0
        self.workers = 0
        self.workers_lock = threading.Lock()
        #: The asyncio side, when the app is served on a loop; set by ``_aio.Loop``.
        self.aio: Loop | None = None
        self.stopped: queue.SimpleQueue[None] = queue.SimpleQueue()

    # --- lifecycle ------------------------------------------------------------

    def start(self) -> None:
        """Start the shared threads."""
        handlers = [*self.methods.values(), *self.app.lifecycle_handlers.values()]
        if any(not h.is_async for h in handlers):
            threading.Thread(target=self._watch_pool, name="hookhost-pool", daemon=True).start()
        if self.app.event_handlers:
            threading.Thread(target=self._event_loop, name="hookhost-events", daemon=True).start()

    def close(self) -> None:
        """Undo :meth:`start`: let idle threads end."""
        for _ in range(self.workers):
            self.jobs.put(None)
        self.events.put(None)

    def stop_threadsafe(self) -> None:
        """Ask whoever serves to stop; from any thread, or a signal handler."""
        if self.aio is not None:
            self.aio.stop_threadsafe()
        else:
            self.stopped.put(None)  # SimpleQueue.put is safe even in a signal handler

    def busy(self) -> bool:
        """Whether some request or event is still pending."""
        return bool(self.events_pending or any(s.inflight for s in self.sessions))

    def wait(self) -> None:
        """Without asyncio: block until asked to stop, then let pending work
        finish within the grace period. Stuck workers are daemons: left behind."""
        self.stopped.get()
        deadline = time.monotonic() + self.app.shutdown_grace
        while self.busy() and time.monotonic() < deadline:
            time.sleep(_DRAIN_POLL)

    # --- sync handlers -----------------------------------------------------------

    # The pool grows only when a job has waited in the queue longer than
    # _SPAWN_AFTER: fast handlers then run on one or two threads, which is
    # much quicker under the GIL than many threads fighting over it, while a
    # handler that blocks (a human approval, a network call) still gets
    # company within milliseconds, up to max_workers.

    def submit(self, job: _Job) -> None:
        job.queued_at = time.monotonic()
        self.jobs.put(job)
        if self.workers == 0:
            self._spawn()
        elif not self.backlog.is_set():
            self.backlog.set()

    def _spawn(self) -> None:
        with self.workers_lock:
            if self.workers < self.app.max_workers:
                self.workers += 1
                threading.Thread(target=self._work, name=f"hookhost-worker-{self.workers}", daemon=True).start()

    def _work(self) -> None:
        jobs = self.jobs
        while True:
            job = jobs.get()
            if job is None:
                return
            now = time.monotonic()
            self.last_dequeue = now
            if now - job.queued_at > _SPAWN_AFTER:
                self._spawn()
            if not job.cancelled:
                job.session.answer(job, self._call_sync(job))

    def _watch_pool(self) -> None:
        """Grow the pool when queued jobs wait because every worker is stuck."""
        while True:
            self.backlog.wait()
            time.sleep(_SPAWN_AFTER)
            if self.jobs.qsize() == 0:
                self.backlog.clear()
                if self.jobs.qsize() == 0:
                    continue
                self.backlog.set()
            if time.monotonic() - self.last_dequeue > _SPAWN_AFTER:
                self._spawn()

    def _call_sync(self, job: _Job) -> bytes:
        try:
            value = job.handler.fn(job.params)
            return encode_result(job.id, to_wire(job.handler.stage, value, job.params.get("event")))
        except Exception as exc:
            return _failure(job, exc)

    # --- events ------------------------------------------------------------------

    def _event_loop(self) -> None:
        while True:
            item = self.events.get()
            if item is None:
                return
            handlers, params = item
            for handler in handlers:
                try:
                    event = handler.view(params)
                    if handler.is_async:
                        assert self.aio is not None
                        self.aio.run_event(handler.fn(event))
                    else:
                        handler.fn(event)
                except Exception:
                    _log().exception("hookhost_sdk: event handler %s failed", getattr(handler.fn, "__name__", "?"))
            with self.events_lock:
                self.events_pending -= 1


class Session:
    """One conversation with a host: its ids in flight, where its answers go."""

    def __init__(self, runtime: Runtime, send: Send) -> None:
        self.runtime = runtime
        self.app = runtime.app
        self.send = send
        self.inflight: dict[Id, _Job] = {}
        runtime.sessions.add(self)

    def close(self) -> None:
        """The peer is gone: drop its pending work, answer nothing more."""
        self.runtime.sessions.discard(self)
        while self.inflight:
            _, job = self.inflight.popitem()
            job.cancelled = True
            if job.handler.is_async and job.task is not None:
                job.task.cancel()

    def answer(self, job: _Job, data: bytes) -> None:
        if self.inflight.pop(job.id, None) is job:
            self.send(data)

    def on_message(self, data: bytes | str, batch: list[_Job]) -> Kind:
        """Dispatch one message; async jobs go to ``batch`` for the loop to start.

        Returns the message's kind: a request is answered exactly once (now
        or later), parse errors and invalid messages at once, the rest never.
        """
        msg = classify(data)
        kind = msg.kind
        if kind == "request":
            assert msg.id is not None and msg.method is not None and msg.params is not None
            self._on_request(msg.id, msg.method, msg.params, batch)
        elif kind == "notification":
            assert msg.method is not None and msg.params is not None
            self._on_notification(msg.method, msg.params)
        elif kind == "parse_error":
            _log().warning("hookhost_sdk: ignoring a message that is not JSON: %.200r", data)
            self.send(encode_error(None, PARSE_ERROR, "parse error: the message is not JSON"))
        elif kind == "invalid":
            _log().warning("hookhost_sdk: invalid message (%s): %.200r", msg.problem, data)
            self.send(encode_error(msg.id, INVALID_REQUEST, f"invalid request: {msg.problem}"))
        # A response: the host sends none in protocol version 1; ignore it.
        return kind

    def _on_request(self, msg_id: Id, method: str, params: dict[str, Any], batch: list[_Job]) -> None:
        handler = self.runtime.methods.get(method)
        if handler is None and not (method == "hook.lifecycle" and self.app.lifecycle_handlers):
            if method == "hook.hello":
                self._hello(msg_id, params)
            else:
                self.send(encode_error(msg_id, METHOD_NOT_FOUND, f"method not found: {method}"))
            return
        try:
            check_params(method, params)
        except ProtocolError as exc:
            self.send(encode_error(msg_id, INVALID_PARAMS, f"invalid params for {method}: {exc}"))
            return
        if msg_id in self.inflight:
            self.send(encode_error(msg_id, INVALID_REQUEST, "a request with this id is already in flight"))
            return
        if handler is None:
            handler = self.app.lifecycle_handlers.get(params["event"])
            if handler is None:
                # The host sends every lifecycle request to a hook that
                # intercepts "lifecycle"; one this app has no handler for passes.
                self.send(encode_result(msg_id, {"action": "continue"}))
                return
        job = _Job(msg_id, self, handler, handler.view(params))
        self.inflight[msg_id] = job
        if handler.is_async:
            batch.append(job)
        else:
            self.runtime.submit(job)

    def _hello(self, msg_id: Id, params: dict[str, Any]) -> None:
        from .params import Hello

        try:
            check_params("hook.hello", params)
        except ProtocolError as exc:
            self.send(encode_error(msg_id, INVALID_PARAMS, f"invalid params for hook.hello: {exc}"))
            return
        self.app.hello_params = Hello(params)
        self.send(encode_result(msg_id, self.app.hello_result()))

    def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "$/cancel_request":
            target = params.get("id")
            if isinstance(target, (int, str)) and not isinstance(target, bool):
                self._cancel(target)
        elif method == "hook.runtime_event":
            try:
                check_params(method, params)
            except ProtocolError as exc:
                _log().warning("hookhost_sdk: ignoring a malformed runtime event: %s", exc)
                return
            handlers = self.app.handlers_for_event(params["kind"])
            if handlers:
                runtime = self.runtime
                with runtime.events_lock:
                    runtime.events_pending += 1
                runtime.events.put((handlers, params))
        # Any other notification is unknown and ignored, as the spec requires.

    def _cancel(self, target: Id) -> None:
        job = self.inflight.pop(target, None)
        if job is None:
            return  # unknown or already answered: ignore
        job.cancelled = True
        self.send(encode_error(target, REQUEST_CANCELLED, "request cancelled"))
        if job.handler.is_async:
            assert self.runtime.aio is not None
            self.runtime.aio.cancel_threadsafe(job)


class Server:
    """Serves one app over one pair of file descriptors until told to stop."""

    def __init__(self, app: App, input_fd: int, output_fd: int, protect_stdio: bool) -> None:
        self.runtime = Runtime(app)
        self.session = Session(self.runtime, self._write)
        self.input_fd = input_fd
        self.output_fd = output_fd
        self.protect_stdio = protect_stdio
        self.write_lock = threading.Lock()

    def run(self) -> None:
        """Serve with threads alone, for an app whose handlers are all sync.

        The calling thread waits; on the main thread SIGTERM and SIGINT stop
        serving as EOF does.
        """
        release = _catch_signals(self.runtime.stop_threadsafe)
        try:
            restore = self._open()
            try:
                self.runtime.wait()
            finally:
                self._close(restore)
        finally:
            release()

    async def serve(self) -> None:
        """Serve on the running asyncio loop, where async handlers run."""
        from ._aio import Loop

        aio = Loop(self.runtime)
        try:
            restore = self._open()
            try:
                await aio.wait()
            finally:
                self._close(restore)
        finally:
            aio.close()

    def _open(self) -> Callable[[], None] | None:
        """Take the stdio fds, start the threads; return what undoes the fds."""
        restore = self._take_stdio() if self.protect_stdio else None
        self.runtime.start()
        threading.Thread(target=self._read_loop, name="hookhost-reader", daemon=True).start()
        return restore

    def _close(self, restore: Callable[[], None] | None) -> None:
        self.runtime.close()
        if restore is not None:
            restore()

    def _take_stdio(self) -> Callable[[], None]:
        """Reserve fds 0 and 1 for the wire; return a function that undoes it."""
        sys.stdout.flush()
        wire_out = os.dup(self.output_fd)
        wire_in = os.dup(self.input_fd)
        saved_stdout = sys.stdout
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, self.input_fd)
        os.close(devnull)
        os.dup2(2, self.output_fd)
        sys.stdout = sys.stderr
        in_fd, out_fd = self.input_fd, self.output_fd
        self.input_fd, self.output_fd = wire_in, wire_out

        def restore() -> None:
            sys.stdout.flush()
            sys.stdout = saved_stdout
            os.dup2(wire_out, out_fd)
            os.dup2(wire_in, in_fd)
            # A stuck worker may still write later, and the reader may still be
            # blocked on wire_in: keep both fd numbers alive (no reuse), with
            # late output going nowhere.
            sink = os.open(os.devnull, os.O_WRONLY)
            os.dup2(sink, wire_out)
            os.close(sink)

        return restore

    def _write(self, data: bytes) -> None:
        """Write one whole line. The lock keeps lines from interleaving."""
        try:
            with self.write_lock:
                sent = os.write(self.output_fd, data)
                while sent < len(data):  # a pipe may take a long line in parts
                    sent += os.write(self.output_fd, memoryview(data)[sent:])
        except OSError:  # the host has gone (EPIPE) or the fd is closed
            self.runtime.stop_threadsafe()

    def _read_loop(self) -> None:
        pending: list[bytes] = []
        try:
            while True:
                chunk = os.read(self.input_fd, _READ_SIZE)
                if not chunk:
                    break
                if b"\n" not in chunk:
                    pending.append(chunk)
                    continue
                if pending:
                    pending.append(chunk)
                    chunk = b"".join(pending)
                    pending.clear()
                lines = chunk.split(b"\n")
                rest = lines.pop()
                if rest:
                    pending.append(rest)
                self._dispatch(lines)
            if pending:
                self._dispatch([b"".join(pending)])
        except OSError:
            pass
        except Exception:  # never expected; do not die silently
            _log().exception("hookhost_sdk: reader failed")
        finally:
            self.runtime.stop_threadsafe()

    def _dispatch(self, lines: list[bytes]) -> None:
        batch: list[_Job] = []
        for line in lines:
            if line and not line.isspace():  # blank lines (and a lone "\r") are skipped, as the host does
                self.session.on_message(line, batch)
        if batch:
            assert self.runtime.aio is not None
            self.runtime.aio.start_threadsafe(batch)


def _failure(job: _Job, exc: Exception) -> bytes:
    """The error reply for a handler that raised; the traceback goes to stderr."""
    name = getattr(job.handler.fn, "__name__", "handler")
    _log().error("hookhost_sdk: %s failed on request %r", name, job.id, exc_info=exc)
    return encode_error(job.id, INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")


def _catch_signals(stop: Callable[[], None]) -> Callable[[], None]:
    """Make SIGTERM and SIGINT call ``stop``; return what puts the old handlers back.

    Off the main thread Python cannot set handlers: signals stay as they are.
    """
    saved: dict[int, Any] = {}
    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            saved[sig] = signal.signal(sig, lambda _sig, _frame: stop())
        except ValueError:
            break

    def release() -> None:
        for sig, old in saved.items():
            signal.signal(sig, signal.SIG_DFL if old is None else old)

    return release


def _log() -> logging.Logger:
    """The SDK's logger. Imported on first use: a hook that never logs does
    not pay for the logging package at start-up."""
    import logging

    return logging.getLogger("hookhost_sdk")
