"""The :class:`App`: register handlers with decorators, then ``app.run()``.

The app only records what the hook does; serving (threads, the event loop,
file descriptors) lives in :mod:`hookhost_sdk.server`, and on the network in
:mod:`hookhost_sdk.netserve`. The hello answer is derived from the
registrations, so the host is told exactly the stages and events this
process handles and a config typo cannot route it a call it has no handler
for.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from types import FunctionType
from typing import Any, NoReturn, TypeVar

from . import params as p
from .schema import LIFECYCLE_EVENTS, REQUEST_EVENTS, STAGES, check_pattern, pattern_matches

__all__ = ["App", "Handler"]

F = TypeVar("F", bound=Callable[..., Any])

PROTOCOL_VERSION = 1

_VIEWS: dict[str, type[dict[str, Any]]] = {
    "before_llm": p.LlmRequest,
    "after_llm": p.LlmResponse,
    "before_tool": p.ToolCall,
    "after_tool": p.ToolOutput,
    "approve_tool": p.ToolCall,
}


class Handler:
    """One registered function, with what the server needs to call it."""

    __slots__ = ("fn", "is_async", "stage", "view")

    def __init__(self, fn: Callable[[Any], Any], is_async: bool, stage: str, view: type[dict[str, Any]]) -> None:
        self.fn = fn
        self.is_async = is_async
        self.stage = stage  # a stage name, or "event"
        self.view = view


class App:
    """A hook process: its handlers and its hello answer.

    ``name`` is what the hook calls itself in the hello answer (default: the
    script's file name). ``max_workers`` bounds the threads that run sync
    handlers concurrently. ``shutdown_grace`` is how long, in seconds,
    pending work may still finish after stdin closes or SIGTERM arrives.
    """

    def __init__(self, name: str | None = None, *, max_workers: int = 8, shutdown_grace: float = 0.5) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self.name = name if name is not None else _script_name()
        self.max_workers = max_workers
        self.shutdown_grace = shutdown_grace
        self.stage_handlers: dict[str, Handler] = {}
        self.event_handlers: list[tuple[tuple[str, ...], Handler]] = []
        #: Lifecycle request event name -> its handler (``@app.lifecycle``).
        self.lifecycle_handlers: dict[str, Handler] = {}
        #: The host's last ``hook.hello`` params, once it has sent them.
        self.hello_params: p.Hello | None = None

    # --- registration -------------------------------------------------------

    def _stage(self, stage: str, fn: F) -> F:
        if not callable(fn):
            raise TypeError(f"@app.{stage} decorates a function")
        if stage in self.stage_handlers:
            raise ValueError(f"{stage} already has a handler ({self.stage_handlers[stage].fn.__name__})")
        self.stage_handlers[stage] = Handler(fn, _is_async(fn), stage, _VIEWS[stage])
        return fn

    def before_llm(self, fn: F) -> F:
        """Handle ``hook.before_llm``; the handler gets an :class:`~hookhost_sdk.LlmRequest`."""
        return self._stage("before_llm", fn)

    def after_llm(self, fn: F) -> F:
        """Handle ``hook.after_llm``; the handler gets an :class:`~hookhost_sdk.LlmResponse`."""
        return self._stage("after_llm", fn)

    def before_tool(self, fn: F) -> F:
        """Handle ``hook.before_tool``; the handler gets a :class:`~hookhost_sdk.ToolCall`."""
        return self._stage("before_tool", fn)

    def after_tool(self, fn: F) -> F:
        """Handle ``hook.after_tool``; the handler gets a :class:`~hookhost_sdk.ToolOutput`."""
        return self._stage("after_tool", fn)

    def approve_tool(self, fn: F) -> F:
        """Handle ``hook.approve_tool``; return ``approve()``, ``refuse(reason)`` or ``abstain()``.

        ``None`` (or ``continue_()``) is ``abstain()``: the hook does not
        decide and the agent decides as with no hook; it never approves.
        """
        return self._stage("approve_tool", fn)

    def lifecycle(self, *events: str) -> Callable[[F], F]:
        """Handle ``hook.lifecycle`` requests of the named events.

        ``events`` are request events: session_start, user_prompt_submit,
        turn_start, subagent_start, pre_compact, before_compaction. The
        handler gets a :class:`~hookhost_sdk.LifecycleEvent` and may return
        ``continue_()``, ``block(reason)``, ``context(text)``,
        ``system_message(text)``, ``summary(text)``, a sum of these, a str
        (the same as ``context(str)``), a dict in protocol shape or ``None``.
        The other lifecycle events are not requests: observe them with
        ``@app.on_event("lifecycle.*")``.
        """
        if not events:
            raise TypeError('lifecycle() needs at least one event, e.g. lifecycle("session_start")')
        if len(events) == 1 and callable(events[0]):
            raise TypeError('@app.lifecycle needs the events it handles, e.g. @app.lifecycle("session_start")')
        for event in events:
            if not isinstance(event, str) or event not in LIFECYCLE_EVENTS:
                raise ValueError(
                    f"unknown lifecycle event {event!r}; request events are {', '.join(REQUEST_EVENTS)}"
                )
            if event not in REQUEST_EVENTS:
                raise ValueError(
                    f"lifecycle event {event!r} is not a request, so no hook answers it; it arrives as the "
                    f'runtime event "lifecycle.{event}": observe it with @app.on_event("lifecycle.{event}")'
                )
            if event in self.lifecycle_handlers:
                taken = self.lifecycle_handlers[event].fn.__name__
                raise ValueError(f"lifecycle event {event} already has a handler ({taken})")
        if len(set(events)) != len(events):
            raise ValueError(f"lifecycle() names an event twice: {events}")

        def register(fn: F) -> F:
            if not callable(fn):
                raise TypeError("@app.lifecycle(...) decorates a function")
            for event in events:
                if event in self.lifecycle_handlers:
                    raise ValueError(f"lifecycle event {event} already has a handler")
            handler = Handler(fn, _is_async(fn), "lifecycle", p.LifecycleEvent)
            for event in events:
                self.lifecycle_handlers[event] = handler
            return fn

        return register

    def on_event(self, *patterns: str) -> Callable[[F], F]:
        """Observe runtime events whose kind matches any pattern.

        Patterns are exact kinds, ``prefix.*`` or ``*``. Event handlers run
        one at a time in arrival order; what they return is ignored.
        """
        if not patterns:
            raise TypeError('on_event() needs at least one pattern, e.g. on_event("agent.*")')
        for pattern in patterns:
            check_pattern(pattern)

        def register(fn: F) -> F:
            if not callable(fn):
                raise TypeError("@app.on_event(...) decorates a function")
            self.event_handlers.append((patterns, Handler(fn, _is_async(fn), "event", p.RuntimeEvent)))
            return fn

        return register

    # --- what the server asks -----------------------------------------------

    def hello_result(self) -> dict[str, Any]:
        """The ``hook.hello`` answer: exactly the registered stages and patterns."""
        observe: list[str] = []
        for patterns, _ in self.event_handlers:
            observe.extend(x for x in patterns if x not in observe)
        registered = set(self.stage_handlers) | ({"lifecycle"} if self.lifecycle_handlers else set())
        return {
            "name": self.name,
            "version": PROTOCOL_VERSION,
            "intercept": [s for s in STAGES if s in registered],
            "observe": observe,
        }

    def needs_asyncio(self) -> bool:
        """Whether some handler is a coroutine function, so serving needs a loop."""
        handlers = [*self.stage_handlers.values(), *self.lifecycle_handlers.values()]
        return any(h.is_async for h in handlers) or any(h.is_async for _, h in self.event_handlers)

    def handlers_for_event(self, kind: str) -> list[Handler]:
        """Event handlers matching ``kind``, in registration order."""
        return [h for patterns, h in self.event_handlers if any(pattern_matches(x, kind) for x in patterns)]

    # --- running --------------------------------------------------------------

    async def serve(
        self,
        *,
        input_fd: int = 0,
        output_fd: int = 1,
        protect_stdio: bool = True,
        listen: str | None = None,
        token: str | None = None,
    ) -> None:
        """Serve the protocol until stdin closes or SIGTERM/SIGINT arrives.

        With ``protect_stdio`` (the default) fd 1 is reserved for the wire
        while serving: the real stdout is duplicated for protocol output and
        fd 1 and ``sys.stdout`` point at stderr; fd 0 is moved aside likewise
        so that a child process cannot swallow protocol input.

        With ``listen="HOST:PORT"`` it serves WebSocket and HTTP on that
        address instead (:mod:`hookhost_sdk.netserve`), until SIGTERM/SIGINT;
        stdin and stdout are then left alone. ``token`` then requires
        ``Authorization: Bearer TOKEN`` on every request and upgrade.
        """
        if listen is not None:
            from .netserve import serve

            await serve(self, listen, token=token)
            return
        if token is not None:
            raise ValueError("a token goes with listen=: over stdio there is no token to check")
        from .server import Server

        await Server(self, input_fd, output_fd, protect_stdio).serve()

    def run(self, listen: str | None = None, *, token: str | None = None) -> None:
        """Serve on stdin/stdout; return (exit status 0) when the host is done.

        ``listen="HOST:PORT"``, or ``--listen HOST:PORT`` (``--listen=HOST:PORT``)
        on the command line, serves WebSocket and HTTP on that address
        instead: it prints ``listening on ws://HOST:PORT`` once bound (port 0
        picks a free port) and returns on SIGTERM/SIGINT. ``token=``, or
        ``--token-file PATH`` (the file's content, trimmed), then requires
        ``Authorization: Bearer TOKEN`` on every request and upgrade. The
        flags are removed from ``sys.argv``; a bad one exits with status 2.
        """
        if listen is None:
            listen = _take_flag(sys.argv, "--listen", "HOST:PORT")
        token_file = _take_flag(sys.argv, "--token-file", "PATH")
        if listen is not None:
            token = self._network_options(listen, token, token_file)
        elif token is not None or token_file is not None:
            _usage(f"{self.name}: --token-file goes with --listen HOST:PORT: over stdio there is no token to check")
        try:
            if listen is None and not self.needs_asyncio():
                from .server import Server

                # No asyncio for plain functions over stdio: it is most of
                # a hook's start-up (see hookhost_sdk.server).
                Server(self, 0, 1, protect_stdio=True).run()
            else:
                import asyncio

                asyncio.run(self.serve(listen=listen, token=token))
        except KeyboardInterrupt:
            pass
        except OSError as exc:
            if listen is None:
                raise
            raise SystemExit(f"{self.name}: cannot listen on {listen}: {exc}") from None

    def _network_options(self, listen: str, token: str | None, token_file: str | None) -> str | None:
        """Check ``--listen`` and read the token; exit with status 2 when either is unusable."""
        from .netserve import check_token, parse_address, read_token_file  # not imported for stdio

        try:
            parse_address(listen)
        except ValueError as exc:
            _usage(f"{self.name}: --listen: {exc}")
        try:
            if token_file is not None:
                return read_token_file(token_file)
            return None if token is None else check_token(token)
        except ValueError as exc:
            _usage(f"{self.name}: {exc}")


def _take_flag(argv: list[str], flag: str, what: str) -> str | None:
    """Remove ``FLAG VALUE`` or ``FLAG=VALUE`` from ``argv``; return VALUE."""
    for i, arg in enumerate(argv[1:], 1):
        if arg == "--":
            break
        if arg.startswith(flag + "="):
            del argv[i]
            return arg.partition("=")[2]
        if arg == flag:
            if i + 1 >= len(argv):
                _usage(f"{flag} needs {what}")
            value = argv[i + 1]
            del argv[i : i + 2]
            return value
    return None


def _usage(message: str) -> NoReturn:
    print(message, file=sys.stderr)
    raise SystemExit(2)


_CO_COROUTINE = 0x80  # inspect.CO_COROUTINE


def _is_async(fn: Callable[..., Any]) -> bool:
    """``inspect.iscoroutinefunction`` of ``fn`` or of its ``__call__``.

    A plain function, nearly every handler, is read from its code flags as
    inspect does: importing inspect costs a hook about 3 ms of start-up.
    """
    if type(fn) is FunctionType and not hasattr(fn, "_is_coroutine_marker"):
        return bool(fn.__code__.co_flags & _CO_COROUTINE)
    import inspect

    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))


def _script_name() -> str:
    main = sys.argv[0] if sys.argv and sys.argv[0] else "hook"
    return os.path.splitext(os.path.basename(main))[0] or "hook"
