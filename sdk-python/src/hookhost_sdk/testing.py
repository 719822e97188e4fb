"""Drive a real hook process from a test, the way the host would.

    with HookProcess(["python3", "guard.py"]) as hook:
        assert hook.call("before_tool", {"tool": "shell", "arguments": {"command": "sudo ls"}}) == {...}

It starts the process, performs the hello, then lets a test send requests
and notifications and wait for the answers by id. Everything the hook writes
to stdout that is not JSON is kept in :attr:`HookProcess.garbage` (it should
stay empty: stdout is the wire), and stderr is kept in
:meth:`HookProcess.stderr`. Works with any hook, SDK or not.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["HookProcess", "HookError"]


class HookError(Exception):
    """The hook answered a call with a JSON-RPC error."""

    def __init__(self, error: Mapping[str, Any]) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code = error.get("code")
        self.message = error.get("message")


class HookProcess:
    """A hook process speaking the protocol over pipes."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        name: str = "test",
        hello: bool = True,
        timeout: float = 10.0,
    ) -> None:
        self.timeout = timeout
        self.proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        #: Every JSON message read from stdout, in order.
        self.messages: list[Any] = []
        #: Every stdout line that was not JSON.
        self.garbage: list[bytes] = []
        self._stderr: list[bytes] = []
        self._cond = threading.Condition()
        self._next_id = 1
        self._closed = False
        self._readers = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for reader in self._readers:
            reader.start()
        self.hello_result: Any = None
        if hello:
            self.hello_result = self.request("hook.hello", {"name": name, "version": 1})["result"]

    # --- reading ------------------------------------------------------------------

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                with self._cond:
                    self.garbage.append(line)
                continue
            with self._cond:
                self.messages.append(message)
                self._cond.notify_all()
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._cond:
                self._stderr.append(line)
                self._cond.notify_all()

    def stderr(self) -> str:
        """What the hook has written to stderr so far."""
        with self._cond:
            return b"".join(self._stderr).decode(errors="replace")

    def wait_for(self, predicate: Any, timeout: float | None = None) -> Any:
        """Wait until some message satisfies ``predicate``; return it."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        with self._cond:
            while True:
                for message in self.messages:
                    if predicate(message):
                        return message
                left = deadline - time.monotonic()
                if left <= 0 or self._closed:
                    raise TimeoutError(f"no matching message; got {self.messages!r}; stderr: {self.stderr()}")
                self._cond.wait(left)

    def response(self, msg_id: Any, timeout: float | None = None) -> dict[str, Any]:
        """The response to request ``msg_id`` (same JSON type and value)."""
        return self.wait_for(  # type: ignore[no-any-return]
            lambda m: isinstance(m, dict) and "id" in m and _same_id(m["id"], msg_id) and "method" not in m,
            timeout,
        )

    def stderr_contains(self, text: str, timeout: float | None = None) -> bool:
        """Wait until stderr contains ``text``; False if it never does."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        with self._cond:
            while text not in b"".join(self._stderr).decode(errors="replace"):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return True

    # --- writing ------------------------------------------------------------------

    def send_line(self, line: str | bytes) -> None:
        """Write one raw line (a newline is added)."""
        data = line.encode() if isinstance(line, str) else line
        assert self.proc.stdin is not None
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def send(self, message: Mapping[str, Any]) -> None:
        self.send_line(json.dumps(message))

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def start(self, method: str, params: Any, msg_id: Any = None) -> Any:
        """Send a request without waiting; return its id."""
        if msg_id is None:
            msg_id = self.new_id()
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return msg_id

    def request(self, method: str, params: Any, msg_id: Any = None, timeout: float | None = None) -> dict[str, Any]:
        """Send a request and return the whole response object."""
        return self.response(self.start(method, params, msg_id), timeout)

    def call(self, stage: str, params: Any, timeout: float | None = None) -> Any:
        """Call ``hook.<stage>`` and return its result; raise :class:`HookError` on an error reply."""
        response = self.request(f"hook.{stage}", params, timeout=timeout)
        if "error" in response:
            raise HookError(response["error"])
        return response["result"]

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    # --- ending -------------------------------------------------------------------

    def close(self, timeout: float | None = None) -> int:
        """Close stdin (the host's shutdown signal) and wait for the exit status."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        return self.proc.wait(self.timeout if timeout is None else timeout)

    def terminate(self, timeout: float | None = None) -> int:
        """Send SIGTERM and wait for the exit status."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(self.timeout if timeout is None else timeout)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for reader in self._readers:
            reader.join(2.0)  # they end at EOF; a leftover grandchild may hold the pipe
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass

    def __enter__(self) -> HookProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()


def _same_id(a: Any, b: Any) -> bool:
    return type(a) is type(b) and bool(a == b)
