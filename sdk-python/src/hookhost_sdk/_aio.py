"""The asyncio side of serving: async handlers, async event handlers, and
stopping on a loop.

Kept apart from :mod:`hookhost_sdk.server` so that a stdio hook whose
handlers are all plain functions never imports asyncio, which is most of
what the SDK would add to a hook's start-up. This module is imported when something needs the
loop: an ``async def`` handler, ``await app.serve()``, or the network
transports (:mod:`hookhost_sdk.netserve`).
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from typing import Any

from .results import to_wire
from .server import _DRAIN_POLL, Runtime, _failure, _Job
from .wire import REQUEST_CANCELLED, encode_error, encode_result

_CANCEL_WAIT = 0.1  # seconds cancelled tasks get to finish at shutdown


class Loop:
    """Binds a :class:`~hookhost_sdk.server.Runtime` to the running loop.

    Create it on the loop; SIGTERM and SIGINT then stop serving (on the main
    thread), and :meth:`close` undoes that.
    """

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.loop = asyncio.get_running_loop()
        self.stop = asyncio.Event()
        self.signals: list[int] = []
        runtime.aio = self
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                self.loop.add_signal_handler(sig, self.stop.set)
            except (RuntimeError, ValueError, NotImplementedError):
                continue  # not the main thread, or no signals here
            self.signals.append(sig)

    def close(self) -> None:
        for sig in self.signals:
            self.loop.remove_signal_handler(sig)

    def stop_threadsafe(self) -> None:
        try:
            self.loop.call_soon_threadsafe(self.stop.set)
        except RuntimeError:
            pass  # the loop is already closed

    async def wait(self) -> None:
        """Serve until asked to stop, then drain."""
        await self.stop.wait()
        await self.drain()

    async def drain(self) -> None:
        """Let pending work finish within the grace period, then cancel the rest."""
        runtime = self.runtime
        deadline = self.loop.time() + runtime.app.shutdown_grace
        while self.loop.time() < deadline and runtime.busy():
            await asyncio.sleep(_DRAIN_POLL)
        tasks = [job.task for s in runtime.sessions for job in list(s.inflight.values()) if job.task is not None]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=_CANCEL_WAIT)

    # --- async handlers ----------------------------------------------------------

    def start_threadsafe(self, batch: list[_Job]) -> None:
        try:
            self.loop.call_soon_threadsafe(self.start, batch)
        except RuntimeError:
            pass

    def start(self, batch: list[_Job]) -> None:
        """Start the async jobs a dispatch collected; call on the loop."""
        for job in batch:
            if not job.cancelled:
                job.task = self.loop.create_task(self._call(job))

    def cancel_threadsafe(self, job: _Job) -> None:
        try:
            self.loop.call_soon_threadsafe(_cancel_task, job)
        except RuntimeError:
            pass

    async def _call(self, job: _Job) -> None:
        try:
            value = await job.handler.fn(job.params)
            data = encode_result(job.id, to_wire(job.handler.stage, value, job.params.get("event")))
        except asyncio.CancelledError:
            # Cancelled by shutdown (a $/cancel_request has already answered).
            job.session.answer(job, encode_error(job.id, REQUEST_CANCELLED, "request cancelled"))
            raise
        except Exception as exc:
            data = _failure(job, exc)
        job.session.answer(job, data)

    # --- events ------------------------------------------------------------------

    def run_event(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run an async event handler on the loop; wait for it (event thread)."""
        asyncio.run_coroutine_threadsafe(coro, self.loop).result()


def _cancel_task(job: _Job) -> None:
    if job.task is not None:
        job.task.cancel()
