"""Embed hookhost in a Python agent: a client for ``hookhost serve`` (the sidecar).

    from hookhost_sdk.host import Host

    with Host.start("hooks.toml") as host:
        verdict = host.before_tool({"tool": "shell", "arguments": {"command": "ls"}})
        if verdict.proceed:                        # verdict.allowed: a hook approved it, no need to ask
            output = run_tool(verdict.params)      # the call as the hooks left it
        elif verdict.action == "respond":
            output = verdict.result                # a hook answered instead of the tool
        else:
            ...                                    # denied or aborted: verdict.reason says why

:meth:`Host.start` runs ``hookhost serve -c CONFIG --stdio`` as a child
process and returns once every hook is up; :meth:`Host.connect` connects to
a running ``hookhost serve -c CONFIG --listen ADDR`` over WebSocket instead,
with the same methods. Each method sends one JSON-RPC
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import IO, Any, Protocol, TextIO

from ._netcommon import check_token, read_token_file
from ._wsclient import HostRefused, WebSocketLink

__all__ = [
    "Host",
    "Verdict",
    "Approval",
    "LifecycleVerdict",
    "HostError",
    "HostExited",
    "HostRefused",
    "HostTimeout",
]

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
    """hookhost exited, or closed its output or the connection, before answering."""

    def __init__(
        self, method: str, returncode: int | None, stderr_tail: str, *, closed: bool = False, detail: str | None = None
    ) -> None:
        status = "is gone" if returncode is None else f"exited with status {returncode}"
        gone = detail or f"hookhost {status}"
        text = f"{method}: the Host is closed" if closed else f"{method}: {gone} before answering"
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
    ``modify``, an ``ask`` or an ``allow`` (the whole value, not a patch),
    else the params it sent. ``result`` is the tool result of a
    ``respond``; ``reason`` comes with ``deny_tool``, ``ask``, ``abort_turn``
    and ``hard_abort``, and with ``allow`` when the hook gave one.
    ``additional_context`` is the hooks' text for the model's context
    (before_tool and after_tool, joined with newlines), when any sent one.
    ``raw`` is the answer as hookhost sent it.
    """

    action: str
    params: dict[str, Any]
    result: dict[str, Any] | None = None
    reason: str | None = None
    additional_context: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def proceed(self) -> bool:
        """Go on with ``params`` (``continue``, ``modify`` or ``allow``)."""
        return self.action in ("continue", "modify", "allow")

    @property
    def modified(self) -> bool:
        """Hooks rewrote ``params`` (``modify``, or ``allow`` with its ``call``)."""
        return self.action == "modify" or (self.action == "allow" and "call" in self.raw)

    @property
    def allowed(self) -> bool:
        """before_tool only: a hook approved the call; run ``params`` without asking the user.

        Only a hook's explicit ``allow`` says this (no hook asked, denied,
        answered or aborted after it); ``continue`` and ``modify`` never do.
        """
        return self.action == "allow"

    @property
    def denied(self) -> bool:
        """before_tool only: do not run the tool; ``reason`` goes to the model."""
        return self.action == "deny_tool"

    @property
    def asked(self) -> bool:
        """before_tool only: ask the user whether to run ``params``; ``reason`` says why.

        Not a denial: run the call if the user says yes.
        """
        return self.action == "ask"

    @property
    def aborted(self) -> bool:
        """End the turn (``abort_turn``) or the whole loop (``hard_abort``)."""
        return self.action in ("abort_turn", "hard_abort")


@dataclass(frozen=True, slots=True)
class Approval:
    """The answer of ``host.approve_tool``.

    ``approved`` is ``True`` when an approver approved (``reason``: its
    reason, when it gave one), ``False`` when one refused (``reason`` goes
    to the model), and ``None`` when no hook decided (hookhost answered
    ``{"action": "continue"}``): that is not an approval, the agent decides
    as it would with no hook (its own rules, or asking the user). Test a
    refusal with :attr:`refused`, not ``not approval.approved``, so that
    "undecided" is neither approved nor refused.
    """

    approved: bool | None
    reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def decided(self) -> bool:
        """A hook approved or refused; ``False``: the agent decides."""
        return self.approved is not None

    @property
    def refused(self) -> bool:
        """A hook refused: do not run the tool; ``reason`` goes to the model."""
        return self.approved is False


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


class _Link(Protocol):
    """How messages travel between a :class:`Host` and hookhost: a pipe or a WebSocket."""

    proc: subprocess.Popen[bytes] | None

    def start(self, deliver: Callable[[bytes], None], ended: Callable[[], None]) -> None:
        """Start reading: ``deliver`` each message, then call ``ended`` once, at the end of input."""

    def send(self, message: bytes) -> bool:
        """Send one message (one JSON text); False when hookhost no longer reads."""

    def close(self, timeout: float) -> int:
        """End the conversation; 0 when all went well."""

    def exit_info(self) -> tuple[int | None, str, str | None]:
        """For :class:`HostExited`: the exit status, the stderr tail, and what happened if not an exit."""


class Host:
    """A running sidecar; make one with :meth:`Host.start` or :meth:`Host.connect`."""

    def __init__(self, link: _Link, *, timeout: float, stderr: TextIO | None) -> None:
        self.proc = link.proc
        self.timeout = timeout
        self._link = link
        self._sink = stderr
        self._lock = threading.Lock()  # guards the fields below
        self._pending: dict[int, _Call] = {}
        self._next_id = 1
        self._closing = False
        self._gone = False
        self._eof = threading.Event()
        link.start(self._deliver, self._ended)

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
        return cls(_Pipe(proc, stderr), timeout=timeout, stderr=stderr)._ready()

    @classmethod
    def connect(
        cls,
        url: str,
        *,
        token: str | None = None,
        token_file: str | os.PathLike[str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        stderr: TextIO | None = None,
    ) -> Host:
        """Connect to a running ``hookhost serve -c CONFIG --listen ADDR`` at ``url`` (``ws://HOST:PORT``).

        With ``token``, or ``token_file`` (its content, trimmed), the upgrade
        carries ``Authorization: Bearer TOKEN``; no ``Origin`` is ever sent.
        A refused upgrade raises :class:`HostRefused` with its HTTP
        ``status`` (401: the token is missing or wrong). The methods are
        those of :meth:`start`; messages over 64 KiB are sent in
        continuation frames. :meth:`close` closes the connection; the
        sidecar and its hooks keep running.
        """
        if token is not None and token_file is not None:
            raise ValueError("pass token or token_file, not both")
        secret = read_token_file(os.fspath(token_file)) if token_file is not None else None
        secret = check_token(token) if token is not None else secret
        link = WebSocketLink.open(url, secret, timeout, stderr)
        return cls(link, timeout=timeout, stderr=stderr)._ready()

    def _ready(self) -> Host:
        """Wait for the first answer (hookhost reads nothing before every hook has started)."""
        try:
            self.stats()
        except BaseException:
            self.close()
            raise
        return self

    @property
    def pid(self) -> int:
        """hookhost's process id (a :meth:`start` Host only)."""
        if self.proc is None:
            raise AttributeError("a Host made with connect() has no process")
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
        """The approvers' answer; ``approved`` is ``None`` when none decided (see :class:`Approval`)."""
        raw = self._object("host.approve_tool", params, timeout)
        approved = raw.get("approved")
        reason = raw.get("reason")
        return Approval(
            approved if isinstance(approved, bool) else None,
            reason if isinstance(reason, str) else None,
            raw,
        )

    def lifecycle(
        self,
        event: str,
        payload: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> LifecycleVerdict:
        """Run a lifecycle event; events that are not requests are answered ``continue``.

        ``event`` is one of the protocol's events or an agent's own
        snake_case name (observe-only: emitted as ``lifecycle.<event>`` and
        run by the command hooks that list it). At ``stop`` and
        ``subagent_stop`` a block is the agent's next instruction; pass
        ``meta={"session_key": ...}`` so that hookhost counts blocked stops
        per session. ``meta`` may carry ``transcript_path``, ``cwd``,
        ``permission_mode`` and ``model`` too.
        """
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
        message = _encode({"jsonrpc": "2.0", "method": "host.emit", "params": params})
        with self._lock:
            usable = not (self._closing or self._gone)
        if not usable or not self._link.send(message.encode()):
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
        data = f'{{"jsonrpc":"2.0","id":{msg_id},"method":{_encode(method)},"params":{body}}}'.encode()
        if not self._link.send(data):
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
        """End the conversation and return 0 when all went well.

        A :meth:`start` Host closes hookhost's stdin: hookhost answers what
        it has read, stops its hooks and exits, and this returns its exit
        status; after ``timeout`` seconds it is killed. A :meth:`connect`
        Host closes the WebSocket (0 when the sidecar answered the close,
        else 1); the sidecar runs on. Calls made after this raise
        :class:`HostExited`.
        """
        with self._lock:
            self._closing = True
        return self._link.close(timeout)

    def __enter__(self) -> Host:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- internals --------------------------------------------------------------

    def _stage(self, stage: str, params: Mapping[str, Any], timeout: float | None) -> Verdict:
        raw = self._object(f"host.{stage}", params, timeout)
        action = raw.get("action") or "continue"
        rewritten = raw.get(_MODIFIED[stage]) if action in ("modify", "ask", "allow") else None
        context = raw.get("additional_context")
        return Verdict(
            action,
            rewritten if isinstance(rewritten, dict) else dict(params),
            raw.get("result") if action == "respond" else None,
            raw.get("reason"),
            context if isinstance(context, str) else None,
            raw,
        )

    def _object(self, method: str, params: Mapping[str, Any], timeout: float | None) -> dict[str, Any]:
        result = self.request(method, params, timeout=timeout)
        if not isinstance(result, dict):
            raise HostError(method, 0, f"hookhost answered with {result!r}, not an object")
        return result

    def _exited(self, method: str) -> HostExited:
        returncode, tail, detail = self._link.exit_info()
        with self._lock:
            closed = self._closing
        return HostExited(method, returncode, tail, closed=closed, detail=detail)

    def _deliver(self, data: bytes) -> None:
        """One message from hookhost: the answer to a waiting call, or a line for the log."""
        try:
            message = json.loads(data)
        except ValueError:
            self._log(f"hookhost_sdk.host: hookhost wrote a message that is not JSON: {data[:200]!r}\n")
            return
        msg_id = message.get("id") if isinstance(message, dict) else None
        with self._lock:
            call = self._pending.pop(msg_id, None) if type(msg_id) is int else None
        if call is not None:
            call.response = message
            call.done.set()
        elif msg_id is None:  # -32700/-32600 for a message it could not read; no caller to give it to
            self._log(f"hookhost_sdk.host: hookhost answered without an id: {data[:200]!r}\n")

    def _ended(self) -> None:
        """hookhost is gone (its link said so): release every caller still waiting."""
        with self._lock:
            self._gone = True
            pending, self._pending = self._pending, {}
        for call in pending.values():
            call.done.set()
        self._eof.set()

    def _log(self, text: str) -> None:
        _log(self._sink, text)


class _Pipe:
    """The link to a ``hookhost serve --stdio`` child: lines on its stdin and stdout."""

    def __init__(self, proc: subprocess.Popen[bytes], sink: TextIO | None) -> None:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self.proc: subprocess.Popen[bytes] | None = proc
        self._proc = proc
        self._stdin = proc.stdin
        self._sink = sink
        self._write_lock = threading.Lock()
        self._tail_lock = threading.Lock()
        self._tail: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL_LINES)
        self._stderr_reader = threading.Thread(target=self._read_stderr, args=(proc.stderr,), daemon=True)
        self._reader: threading.Thread | None = None

    def start(self, deliver: Callable[[bytes], None], ended: Callable[[], None]) -> None:
        assert self._proc.stdout is not None
        self._reader = threading.Thread(target=self._read_stdout, args=(self._proc.stdout, deliver, ended), daemon=True)
        self._stderr_reader.start()
        self._reader.start()

    def send(self, message: bytes) -> bool:
        """Write one line; False when hookhost no longer reads its stdin."""
        with self._write_lock:
            try:
                self._stdin.write(message + b"\n")
                self._stdin.flush()
            except (OSError, ValueError):  # broken pipe, or closed by close()
                return False
        return True

    def close(self, timeout: float) -> int:
        """Close hookhost's stdin; its exit status (killed after ``timeout`` seconds)."""
        with self._write_lock:
            try:
                self._stdin.close()
            except OSError:
                pass
        proc = self._proc
        try:
            code = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait(timeout)
        if self._reader is not None:
            self._reader.join(timeout)
        self._stderr_reader.join(1.0)  # ends at EOF, unless a stray grandchild holds the pipe
        for reader, stream in ((self._reader, proc.stdout), (self._stderr_reader, proc.stderr)):
            if stream is not None and reader is not None and not reader.is_alive():
                stream.close()
        return code

    def exit_info(self) -> tuple[int | None, str, str | None]:
        with self._tail_lock:
            return self._proc.returncode, "".join(self._tail), None

    def _read_stdout(self, stdout: IO[bytes], deliver: Callable[[bytes], None], ended: Callable[[], None]) -> None:
        for line in stdout:
            deliver(line)
        # End of output: hookhost has exited or is about to. Record how, then
        # release every caller still waiting.
        try:
            self._proc.wait(2.0)
        except subprocess.TimeoutExpired:
            pass
        self._stderr_reader.join(0.5)  # so the tail holds its last words
        ended()

    def _read_stderr(self, stderr: IO[bytes]) -> None:
        for raw in stderr:
            text = raw.decode(errors="replace")
            with self._tail_lock:
                self._tail.append(text)
            _log(self._sink, text)


def _log(sink: TextIO | None, text: str) -> None:
    out = sink if sink is not None else sys.stderr
    try:
        out.write(text)
        out.flush()
    except (OSError, ValueError):
        pass
