"""Embed hookhost in a Python agent: a client for ``hookhost serve --stdio``.

    from hookhost_sdk.host import Host

    with Host.start("hooks.toml") as host:
        verdict = host.before_tool({"tool": "shell", "arguments": {"command": "ls"}})
        if verdict.proceed:
            output = run_tool(verdict.params)      # the call as the hooks left it
        elif verdict.action == "respond":
            output = verdict.result                # a hook answered instead of the tool
        else:
            ...                                    # denied or aborted: verdict.reason says why

:meth:`Host.start` runs ``hookhost serve -c CONFIG --stdio`` as a child
process and returns once every hook is up. Each method sends one JSON-RPC
request (``spec/sidecar.md``) and blocks until its answer, so any number of
threads may call at once; a reader thread matches answers to callers by id.
Every wait is bounded: a call raises :class:`HostTimeout` after ``timeout``
seconds, :class:`HostError` when hookhost answers with an error, and
:class:`HostExited` as soon as hookhost is gone. hookhost's log (its
stderr) is copied line by line to ``stderr`` (default ``sys.stderr``); the
last lines are kept for :class:`HostExited` messages.
"""

from __future__ import annotations

import collections
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import IO, Any, TextIO

__all__ = ["Host", "Verdict", "Approval", "LifecycleVerdict", "HostError", "HostExited", "HostTimeout"]

#: Seconds a call waits for its answer unless told otherwise.
DEFAULT_TIMEOUT = 120.0
#: The longest request line hookhost reads (spec/sidecar.md section 1).
MAX_LINE_BYTES = 16 * 1024 * 1024
_STDERR_TAIL_LINES = 40

# The member of a `modify` verdict that carries the rewritten params, per stage.
_MODIFIED = {"before_tool": "call", "after_tool": "result", "before_llm": "request", "after_llm": "response"}
_encode = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode


class HostError(Exception):
    """hookhost answered a request with a JSON-RPC error (spec/sidecar.md section 3)."""

    def __init__(self, method: str, code: int, message: str) -> None:
        super().__init__(f"{method}: error {code}: {message}")
        self.method = method
        self.code = code
        self.message = message


class HostExited(ConnectionError):
    """hookhost exited, or closed its output, before answering."""

    def __init__(self, method: str, returncode: int | None, stderr_tail: str, *, closed: bool = False) -> None:
        status = "is gone" if returncode is None else f"exited with status {returncode}"
        text = f"{method}: the Host is closed" if closed else f"{method}: hookhost {status} before answering"
        if stderr_tail and not closed:
            text += "; the end of its stderr:\n" + stderr_tail
        super().__init__(text)
        self.method = method
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class HostTimeout(TimeoutError):
    """No answer within the call's timeout (hookhost is still running)."""

    def __init__(self, method: str, timeout: float) -> None:
        super().__init__(f"{method}: no answer from hookhost within {timeout:g} s")
        self.method = method
        self.timeout = timeout


@dataclass(frozen=True, slots=True)
class Verdict:
    """The merged verdict of a before/after llm/tool chain.

    ``params`` is what the agent goes on with: the rewritten params after a
    ``modify`` (the whole value, not a patch), else the params it sent.
    ``result`` is the tool result of a ``respond``; ``reason`` comes with
    ``deny_tool``, ``abort_turn`` and ``hard_abort``. ``raw`` is the answer
    as hookhost sent it.
    """

    action: str
    params: dict[str, Any]
    result: dict[str, Any] | None = None
    reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def proceed(self) -> bool:
        """Go on with ``params`` (``continue`` or ``modify``)."""
        return self.action in ("continue", "modify")

    @property
    def modified(self) -> bool:
        return self.action == "modify"

    @property
    def denied(self) -> bool:
        """before_tool only: do not run the tool; ``reason`` goes to the model."""
        return self.action == "deny_tool"

    @property
    def aborted(self) -> bool:
        """End the turn (``abort_turn``) or the whole loop (``hard_abort``)."""
        return self.action in ("abort_turn", "hard_abort")


@dataclass(frozen=True, slots=True)
class Approval:
    """The answer of ``host.approve_tool``."""

    approved: bool
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class LifecycleVerdict:
    """The answer of ``host.lifecycle``: ``continue`` or ``block``, and the hooks' texts."""

    action: str
    reason: str | None = None
    additional_context: str | None = None
    system_message: str | None = None
    summary: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def blocked(self) -> bool:
        return self.action == "block"


class _Call:
    __slots__ = ("done", "response")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.response: dict[str, Any] | None = None  # None once done: hookhost is gone


class Host:
    """A running ``hookhost serve --stdio``; make one with :meth:`Host.start`."""

    def __init__(self, proc: subprocess.Popen[bytes], *, timeout: float, stderr: TextIO | None) -> None:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self.proc = proc
        self.timeout = timeout
        self._stdin = proc.stdin
        self._sink = stderr
        self._lock = threading.Lock()  # guards the fields below
        self._pending: dict[int, _Call] = {}
        self._next_id = 1
        self._closing = False
        self._gone = False
        self._tail: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL_LINES)
        self._write_lock = threading.Lock()
        self._eof = threading.Event()
        self._stderr_reader = threading.Thread(target=self._read_stderr, args=(proc.stderr,), daemon=True)
        self._reader = threading.Thread(target=self._read_stdout, args=(proc.stdout,), daemon=True)
        self._stderr_reader.start()
        self._reader.start()

    @classmethod
    def start(
        cls,
        config: str | os.PathLike[str],
        *,
        hookhost: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        stderr: TextIO | None = None,
    ) -> Host:
        """Start hookhost on ``config`` and wait until its hooks are up.

        The binary is ``hookhost``, else ``$HOOKHOST_BIN``, else ``hookhost``
        on ``PATH``. ``env`` replaces hookhost's environment (default: this
        process's). ``timeout`` is the default per-call timeout, also used
        for the start. A config that does not load raises
        :class:`HostExited` (status 2, the loader's message in it).
        hookhost runs in its own session, so a Ctrl-C meant for the agent
        does not stop it; closing its stdin (:meth:`close`) does.
        """
        binary = hookhost or os.environ.get("HOOKHOST_BIN") or shutil.which("hookhost")
        if not binary:
            raise FileNotFoundError("no hookhost binary: pass hookhost=..., set HOOKHOST_BIN or put hookhost on PATH")
        proc = subprocess.Popen(
            [os.fspath(binary), "serve", "-c", os.fspath(config), "--stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
        host = cls(proc, timeout=timeout, stderr=stderr)
        try:
            host.stats()  # hookhost reads its first request once every hook has started
        except BaseException:
            host.close()
            raise
        return host

    @property
    def pid(self) -> int:
        return self.proc.pid

    # --- the methods ------------------------------------------------------------

    def before_tool(self, params: Mapping[str, Any], *, timeout: float | None = None) -> Verdict:
        return self._stage("before_tool", params, timeout)

    def after_tool(self, params: Mapping[str, Any], *, timeout: float | None = None) -> Verdict:
        return self._stage("after_tool", params, timeout)

    def before_llm(self, params: Mapping[str, Any], *, timeout: float | None = None) -> Verdict:
        return self._stage("before_llm", params, timeout)

    def after_llm(self, params: Mapping[str, Any], *, timeout: float | None = None) -> Verdict:
        return self._stage("after_llm", params, timeout)

    def approve_tool(self, params: Mapping[str, Any], *, timeout: float | None = None) -> Approval:
        raw = self._object("host.approve_tool", params, timeout)
        return Approval(raw.get("approved") is True, raw.get("reason"))

    def lifecycle(
        self,
        event: str,
        payload: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> LifecycleVerdict:
        """Run a lifecycle event; events that are not requests are answered ``continue``."""
        params: dict[str, Any] = {"event": event}
        if payload is not None:
            params["payload"] = dict(payload)
        if meta is not None:
            params["meta"] = dict(meta)
        raw = self._object("host.lifecycle", params, timeout)
        return LifecycleVerdict(
            raw.get("action") or "continue",
            raw.get("reason"),
            raw.get("additional_context"),
            raw.get("system_message"),
            raw.get("summary"),
            raw,
        )

    def emit(self, kind: str, payload: Any = None, **fields: Any) -> None:
        """Send a runtime event (a notification: nothing comes back).

        ``fields`` are the event's other members (``source``, ``scope``,
        ``severity``, ...); hookhost fills in ``id`` and ``time`` when they
        are left out. hookhost logs and drops an invalid event.
        """
        params = {"kind": kind, "payload": payload, **fields}
        line = _encode({"jsonrpc": "2.0", "method": "host.emit", "params": params}) + "\n"
        with self._lock:
            usable = not (self._closing or self._gone)
        if not usable or not self._write(line.encode()):
            raise self._exited("host.emit")

    def stats(self, *, timeout: float | None = None) -> list[dict[str, Any]]:
        """One object per configured hook, in chain order (calls, errors, breaker, latencies, ...)."""
        hooks: list[dict[str, Any]] = self._object("host.stats", {}, timeout)["hooks"]
        return hooks

    def reload(self, *, timeout: float | None = None) -> dict[str, list[str]]:
        """Re-read the config file: ``{"unchanged": [...], "changed": [...], "removed": [...]}``.

        A config that does not load raises :class:`HostError` (-32000) and
        leaves the running hooks as they were.
        """
        report: dict[str, list[str]] = self._object("host.reload", {}, timeout)
        return report

    def request(self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None) -> Any:
        """Send any request and return its ``result``; the typed methods use this."""
        body = _encode(dict(params or {}))
        if len(body) >= MAX_LINE_BYTES - 100:
            raise ValueError(f"{method}: the params are {len(body)} bytes; hookhost reads lines up to 16 MiB")
        wait = self.timeout if timeout is None else timeout
        call = _Call()
        with self._lock:
            usable = not (self._closing or self._gone)
            msg_id = self._next_id
            if usable:
                self._next_id += 1
                self._pending[msg_id] = call
        if not usable:
            raise self._exited(method)
        data = f'{{"jsonrpc":"2.0","id":{msg_id},"method":{_encode(method)},"params":{body}}}\n'.encode()
        if not self._write(data):
            self._eof.wait(2.0)  # the reader is about to see EOF; let it record the exit status
        if not call.done.wait(wait):
            with self._lock:
                self._pending.pop(msg_id, None)
            if not call.done.is_set():
                raise HostTimeout(method, wait)
        response = call.response
        if response is None:
            raise self._exited(method)
        error = response.get("error")
        if isinstance(error, dict):
            raise HostError(method, error.get("code", 0), str(error.get("message", "")))
        return response.get("result")

    # --- ending -----------------------------------------------------------------

    def close(self, timeout: float = 10.0) -> int:
        """Close hookhost's stdin and return its exit status (0 when all went well).

        hookhost answers what it has read, stops its hooks and exits; after
        ``timeout`` seconds it is killed. Calls made after this raise
        :class:`HostExited`.
        """
        with self._lock:
            self._closing = True
        with self._write_lock:
            try:
                self._stdin.close()
            except OSError:
                pass
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait(timeout)
        self._reader.join(timeout)
        self._stderr_reader.join(1.0)  # ends at EOF, unless a stray grandchild holds the pipe
        for reader, stream in ((self._reader, self.proc.stdout), (self._stderr_reader, self.proc.stderr)):
            if stream is not None and not reader.is_alive():
                stream.close()
        return code

    def __enter__(self) -> Host:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- internals --------------------------------------------------------------

    def _stage(self, stage: str, params: Mapping[str, Any], timeout: float | None) -> Verdict:
        raw = self._object(f"host.{stage}", params, timeout)
        action = raw.get("action") or "continue"
        rewritten = raw.get(_MODIFIED[stage]) if action == "modify" else None
        return Verdict(
            action,
            rewritten if isinstance(rewritten, dict) else dict(params),
            raw.get("result") if action == "respond" else None,
            raw.get("reason"),
            raw,
        )

    def _object(self, method: str, params: Mapping[str, Any], timeout: float | None) -> dict[str, Any]:
        result = self.request(method, params, timeout=timeout)
        if not isinstance(result, dict):
            raise HostError(method, 0, f"hookhost answered with {result!r}, not an object")
        return result

    def _write(self, data: bytes) -> bool:
        """Write one line; False when hookhost no longer reads its stdin."""
        with self._write_lock:
            try:
                self._stdin.write(data)
                self._stdin.flush()
            except (OSError, ValueError):  # broken pipe, or closed by close()
                return False
        return True

    def _exited(self, method: str) -> HostExited:
        with self._lock:
            tail, closed = "".join(self._tail), self._closing
        return HostExited(method, self.proc.returncode, tail, closed=closed)

    def _read_stdout(self, stdout: IO[bytes]) -> None:
        for line in stdout:
            try:
                message = json.loads(line)
            except ValueError:
                self._log(f"hookhost_sdk.host: hookhost wrote a line that is not JSON: {line[:200]!r}\n")
                continue
            msg_id = message.get("id") if isinstance(message, dict) else None
            with self._lock:
                call = self._pending.pop(msg_id, None) if type(msg_id) is int else None
            if call is not None:
                call.response = message
                call.done.set()
            elif msg_id is None:  # -32700/-32600 for a line it could not read; no caller to give it to
                self._log(f"hookhost_sdk.host: hookhost answered without an id: {line[:200]!r}\n")
        # End of output: hookhost has exited or is about to. Record how, then
        # release every caller still waiting.
        try:
            self.proc.wait(2.0)
        except subprocess.TimeoutExpired:
            pass
        self._stderr_reader.join(0.5)  # so the tail holds its last words
        with self._lock:
            self._gone = True
            pending, self._pending = self._pending, {}
        for call in pending.values():
            call.done.set()
        self._eof.set()

    def _read_stderr(self, stderr: IO[bytes]) -> None:
        for raw in stderr:
            text = raw.decode(errors="replace")
            with self._lock:
                self._tail.append(text)
            self._log(text)

    def _log(self, text: str) -> None:
        sink = self._sink if self._sink is not None else sys.stderr
        try:
            sink.write(text)
            sink.flush()
        except (OSError, ValueError):
            pass
