"""The SDK serving real processes: dispatch, ids, errors, concurrency,
cancellation, stdout protection and shutdown.

Each test writes a small hook script and drives it over pipes with
``hookhost_sdk.testing.HookProcess``, exactly as the host would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hookhost_sdk.testing import HookError, HookProcess

SRC = Path(__file__).resolve().parents[1] / "src"

# Generous: the machine is small and noisy. The property under test is
# "exits promptly instead of hanging on the stuck handler (30 s)".
EXIT_BOUND = 3.0

HEADER = """\
import asyncio, os, subprocess, sys, threading, time
from hookhost_sdk import *
app = App("probe")
"""

# For hooks whose handlers are all plain functions: the SDK must not import
# asyncio for them, so the script must not either.
SYNC_HEADER = HEADER.replace("import asyncio, ", "import ")


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Any]:
    hooks: list[HookProcess] = []

    def start(body: str, header: str = HEADER, after: str = "", **kw: Any) -> HookProcess:
        script = tmp_path / f"hook{len(hooks)}.py"
        script.write_text(header + textwrap.dedent(body) + "\napp.run()\n" + textwrap.dedent(after))
        env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(SRC), **kw.pop("env", {})}
        hook = HookProcess([sys.executable, str(script)], env=env, cwd=tmp_path, **kw)
        hooks.append(hook)
        return hook

    yield start
    for hook in hooks:
        hook.kill()


CALL = {"tool": "shell", "arguments": {"command": "ls"}}
OUTPUT = {"tool": "shell", "arguments": {"command": "ls"}, "result": {"for_llm": "a\nb"}}


def test_a_sync_only_hook_serves_everything_without_importing_asyncio(spawn: Any) -> None:
    # asyncio is most of a Python hook's start-up; plain functions do not need it.
    hook = spawn(
        """
        def loaded(): return "asyncio" in sys.modules
        @app.before_tool
        def a(call):
            if call.arguments.get("command") == "slow":
                time.sleep(0.3)
            return deny(f"asyncio loaded: {loaded()}")
        @app.lifecycle("session_start")
        def b(event): return context(f"asyncio loaded: {loaded()}")
        @app.on_event("agent.*")
        def c(event): print(f"event {event.kind}, asyncio loaded: {loaded()}", file=sys.stderr, flush=True)
        """,
        header=SYNC_HEADER,
        after='print(f"at exit, asyncio loaded: {loaded()}", file=sys.stderr, flush=True)\n',
    )
    assert hook.call("before_tool", CALL) == {"action": "deny_tool", "reason": "asyncio loaded: False"}
    assert hook.call("lifecycle", {"event": "session_start"}) == {
        "action": "continue",
        "additional_context": "asyncio loaded: False",
    }
    assert hook.call("lifecycle", {"event": "turn_start"}) == {"action": "continue"}
    for n, kind in enumerate(["agent.turn.start", "llm.call", "agent.turn.end"]):
        hook.notify("hook.runtime_event", {"id": f"e{n}", "kind": kind, "time": "t", "payload": None})
    slow = hook.start("hook.before_tool", {"tool": "shell", "arguments": {"command": "slow"}})
    time.sleep(0.05)
    hook.notify("$/cancel_request", {"id": slow})
    assert hook.response(slow)["error"]["code"] == -32800
    assert hook.request("hook.after_llm", {"model": "m", "response": {}})["error"]["code"] == -32601
    hook.send_line("not json")
    assert hook.wait_for(lambda m: m.get("id", 0) is None)["error"]["code"] == -32700
    assert hook.request("hook.before_tool", {"tool": 5})["error"]["code"] == -32602
    assert hook.call("before_tool", CALL) == {"action": "deny_tool", "reason": "asyncio loaded: False"}
    assert hook.close() == 0
    hook.kill()  # collects the rest of stderr
    events = [line for line in hook.stderr().splitlines() if line.startswith("event ")]
    assert events == [
        "event agent.turn.start, asyncio loaded: False",
        "event agent.turn.end, asyncio loaded: False",
    ]
    assert "at exit, asyncio loaded: False" in hook.stderr()
    assert [m.get("id") for m in hook.messages].count(slow) == 1
    assert hook.garbage == []


def test_serving_plain_functions_imports_none_of_the_heavy_modules(tmp_path: Path) -> None:
    # Start-up guard: these cost a hook tens of milliseconds together. -S
    # keeps site (and whatever .pth files import) out of the picture.
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(SRC)!r})
        from hookhost_sdk import App
        from hookhost_sdk.server import Server
        app = App("plain")
        app.before_tool(lambda call: None)
        app.on_event("*")(lambda event: None)
        app.lifecycle("session_start")(lambda event: None)
        assert not app.needs_asyncio()
        heavy = ("asyncio", "dataclasses", "inspect", "logging")
        print(" ".join(m for m in heavy if m in sys.modules))
        """
    )
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_one_async_handler_brings_in_the_loop_for_every_kind_of_handler(spawn: Any) -> None:
    hook = spawn(
        """
        @app.before_tool
        def a(call): return deny(f"asyncio loaded: {'asyncio' in sys.modules}")
        @app.on_event("agent.*")
        async def c(event): print("event", event.kind, file=sys.stderr, flush=True)
        """,
        header=SYNC_HEADER,
    )
    assert hook.call("before_tool", CALL) == {"action": "deny_tool", "reason": "asyncio loaded: True"}
    hook.notify("hook.runtime_event", {"id": "e", "kind": "agent.turn.start", "time": "t", "payload": None})
    assert hook.stderr_contains("event agent.turn.start")
    assert hook.close() == 0


def test_hello_declares_exactly_the_registered_stages_and_patterns(spawn: Any) -> None:
    hook = spawn(
        """
        @app.approve_tool
        def a(call): return approve()
        @app.before_tool
        async def b(call): return None
        @app.on_event("agent.tool.*")
        def c(event): pass
        """
    )
    assert hook.hello_result == {
        "name": "probe",
        "version": 1,
        "intercept": ["before_tool", "approve_tool"],
        "observe": ["agent.tool.*"],
    }
    assert hook.close() == 0


def test_each_stage_dispatches_with_typed_params(spawn: Any) -> None:
    hook = spawn(
        """
        @app.before_llm
        def a(req: LlmRequest): return modify({"options": {"n": len(req.messages)}})
        @app.after_llm
        async def b(resp: LlmResponse): return modify_response(content=resp.content.upper())
        @app.before_tool
        def c(call: ToolCall): return respond(call.tool + ":" + call.arguments["command"])
        @app.after_tool
        async def d(out: ToolOutput): return modify_result(for_llm=out.for_llm.replace("\\n", ","))
        @app.approve_tool
        def e(call: ToolCall):
            if call.tool == "mine":
                return None  # a hook that does not decide abstains, never approves
            return refuse(f"no {call.tool}") if call.meta.get("turn_id") else approve()
        """
    )
    assert hook.call("before_llm", {"model": "m", "messages": [{"role": "user"}]}) == {
        "action": "modify",
        "request": {"options": {"n": 1}},
    }
    assert hook.call("after_llm", {"model": "m", "response": {"content": "hi"}}) == {
        "action": "modify",
        "response": {"response": {"content": "HI"}},
    }
    assert hook.call("before_tool", CALL) == {"action": "respond", "result": {"for_llm": "shell:ls"}}
    assert hook.call("after_tool", OUTPUT) == {"action": "modify", "result": {"result": {"for_llm": "a,b"}}}
    assert hook.call("approve_tool", CALL) == {"approved": True}
    assert hook.call("approve_tool", {**CALL, "meta": {"turn_id": "t"}}) == {"approved": False, "reason": "no shell"}
    assert hook.call("approve_tool", {**CALL, "tool": "mine"}) == {"action": "continue"}
    assert hook.garbage == []
    assert hook.close() == 0


@pytest.mark.parametrize("msg_id", [7, "7", "", "ünï-1", -5, 0, 2**63 - 1, "req-42"])
def test_ids_are_echoed_exactly(spawn: Any, msg_id: Any) -> None:
    hook = spawn("@app.before_tool\ndef a(call): return None\n")
    response = hook.request("hook.before_tool", CALL, msg_id=msg_id)
    assert type(response["id"]) is type(msg_id) and response["id"] == msg_id
    assert response["result"] == {"action": "continue"}


def test_unknown_methods_bad_lines_and_bad_params_get_errors_and_serving_goes_on(spawn: Any) -> None:
    hook = spawn("@app.before_tool\ndef a(call): return None\n")
    assert hook.request("hook.frobnicate", {})["error"]["code"] == -32601
    # A stage the app has no handler for is unknown too.
    assert hook.request("hook.after_llm", {"model": "m", "response": {}})["error"]["code"] == -32601
    hook.send_line("this is not json")
    assert hook.wait_for(lambda m: m.get("id", 0) is None)["error"]["code"] == -32700
    hook.send_line('{"jsonrpc":"2.0","id":31,"method":"hook.before_tool","params":null}')
    assert hook.response(31)["error"]["code"] == -32600
    hook.send_line('{"jsonrpc":"1.0","id":32,"method":"hook.before_tool","params":{}}')
    assert hook.response(32)["error"]["code"] == -32600
    bad = hook.request("hook.before_tool", {"tool": 5})
    assert bad["error"]["code"] == -32602 and "invalid type: integer `5`, expected a string" in bad["error"]["message"]
    hook.send_line("")
    hook.send_line("   \r")
    assert hook.call("before_tool", CALL) == {"action": "continue"}
    assert hook.close() == 0


def test_notifications_are_never_answered(spawn: Any) -> None:
    hook = spawn(
        """
        @app.before_tool
        def a(call): return None
        @app.on_event("*")
        def seen(event): print("event", event.kind, file=sys.stderr, flush=True)
        """
    )
    hook.notify("$/ping", {})
    hook.notify("$/cancel_request", {"id": 999})  # unknown id: ignored
    hook.notify("$/cancel_request", {"id": None})  # malformed: ignored
    hook.notify("hook.runtime_event", {"id": "e1", "kind": "agent.turn.start", "time": "t", "payload": None})
    hook.notify("hook.runtime_event", {"kind": "missing fields"})
    hook.notify("hook.before_tool", CALL)  # a stage method sent as a notification
    assert hook.stderr_contains("event agent.turn.start")
    final = hook.start("hook.before_tool", CALL)
    hook.response(final)
    assert hook.close() == 0
    assert [m.get("id") for m in hook.messages] == [hook.messages[0]["id"], final]  # hello, then only the last


def test_an_exception_becomes_an_error_reply_and_serving_goes_on(spawn: Any) -> None:
    hook = spawn(
        """
        @app.before_tool
        def a(call):
            if call.arguments.get("command") == "boom":
                raise ValueError("kaboom")
            return None
        @app.after_tool
        async def b(out):
            raise RuntimeError("async kaboom")
        """
    )
    with pytest.raises(HookError) as err:
        hook.call("before_tool", {"tool": "shell", "arguments": {"command": "boom"}})
    assert err.value.code == -32603 and err.value.message == "ValueError: kaboom"
    with pytest.raises(HookError) as err:
        hook.call("after_tool", OUTPUT)
    assert err.value.code == -32603 and "async kaboom" in str(err.value.message)
    assert hook.call("before_tool", CALL) == {"action": "continue"}
    assert "Traceback" in hook.stderr() and "kaboom" in hook.stderr()
    assert hook.close() == 0


def test_an_illegal_helper_is_an_error_reply_not_a_bad_result(spawn: Any) -> None:
    hook = spawn(
        """
        @app.after_llm
        def a(resp): return respond("x")
        @app.approve_tool
        def b(call): return deny("no")
        @app.before_tool
        def c(call): return {"action": "explode"}
        """
    )
    for stage, params, text in [
        ("after_llm", {"model": "m", "response": {}}, "respond() is not allowed at after_llm"),
        ("approve_tool", CALL, "deny() is not allowed at approve_tool; it belongs to before_tool"),
        ("before_tool", CALL, 'unknown action "explode"'),
    ]:
        with pytest.raises(HookError) as err:
            hook.call(stage, params)
        assert err.value.code == -32603 and text in str(err.value.message)
    assert hook.close() == 0


def test_print_and_raw_fd1_writes_go_to_stderr_not_the_wire(spawn: Any) -> None:
    hook = spawn(
        """
        print("printed at import")
        @app.before_tool
        def a(call):
            print("printed by a handler")
            sys.stdout.write("written to sys.stdout\\n")
            os.write(1, b"written to fd 1\\n")
            subprocess.run(["echo", "echoed by a child"], check=True)
            return None
        """
    )
    assert hook.call("before_tool", CALL) == {"action": "continue"}
    for text in ("printed by a handler", "written to sys.stdout", "written to fd 1", "echoed by a child"):
        assert hook.stderr_contains(text), text
    assert hook.close() == 0
    # "printed at import" happened before serving began, so it may be on
    # stdout (a hook should not do that); everything after must not be.
    assert [line for line in hook.garbage if b"printed at import" not in line] == []


def test_a_child_process_cannot_read_the_wire(spawn: Any) -> None:
    hook = spawn(
        """
        @app.before_tool
        def a(call):
            got = subprocess.run(["cat"], capture_output=False, stdout=subprocess.PIPE, timeout=5).stdout
            return deny(f"child read {len(got)} bytes")
        """
    )
    first = hook.start("hook.before_tool", CALL)
    second = hook.start("hook.before_tool", CALL)
    assert hook.response(first)["result"]["reason"] == "child read 0 bytes"
    assert "result" in hook.response(second)
    assert hook.close() == 0


def test_async_handlers_run_concurrently(spawn: Any) -> None:
    hook = spawn(
        """
        release = asyncio.Event()
        @app.before_tool
        async def a(call):
            if call.arguments["command"] == "wait":
                await release.wait()
                return deny("released")
            release.set()
            return None
        """
    )
    waiting = hook.start("hook.before_tool", {"tool": "shell", "arguments": {"command": "wait"}})
    releasing = hook.start("hook.before_tool", {"tool": "shell", "arguments": {"command": "go"}})
    assert hook.response(releasing)["result"] == {"action": "continue"}
    assert hook.response(waiting)["result"] == {"action": "deny_tool", "reason": "released"}
    ids = [m["id"] for m in hook.messages[1:]]
    assert ids == [releasing, waiting]  # answered out of order
    assert hook.close() == 0


def test_sync_handlers_run_concurrently_in_the_pool(spawn: Any) -> None:
    hook = spawn(
        """
        release = threading.Event()
        @app.before_tool
        def a(call):
            if call.arguments["command"] == "wait":
                return deny("released" if release.wait(30) else "never released")
            release.set()
            return None
        """
    )
    waiting = hook.start("hook.before_tool", {"tool": "shell", "arguments": {"command": "wait"}})
    time.sleep(0.1)  # let the first call occupy the only worker
    releasing = hook.start("hook.before_tool", {"tool": "shell", "arguments": {"command": "go"}})
    assert hook.response(releasing)["result"] == {"action": "continue"}
    assert hook.response(waiting)["result"] == {"action": "deny_tool", "reason": "released"}
    assert hook.close() == 0


def test_many_calls_in_flight_all_get_their_own_answer(spawn: Any) -> None:
    hook = spawn(
        """
        @app.before_tool
        def a(call): return deny(call.arguments["command"])
        @app.after_tool
        async def b(out):
            await asyncio.sleep(0.001)
            return modify_result(for_llm=out.for_llm + "!")
        """
    )
    lines = []
    for i in range(400):
        if i % 2:
            params: dict[str, Any] = {"tool": "shell", "arguments": {"command": f"c{i}"}}
            lines.append({"jsonrpc": "2.0", "id": i, "method": "hook.before_tool", "params": params})
        else:
            params = {"tool": "t", "result": {"for_llm": f"o{i}"}}
            lines.append({"jsonrpc": "2.0", "id": f"s{i}", "method": "hook.after_tool", "params": params})
    hook.send_line("\n".join(json.dumps(line) for line in lines))
    for i in range(400):
        if i % 2:
            assert hook.response(i)["result"] == {"action": "deny_tool", "reason": f"c{i}"}
        else:
            assert hook.response(f"s{i}")["result"]["result"] == {"result": {"for_llm": f"o{i}!"}}
    assert len(hook.messages) == 401 and hook.garbage == []
    assert hook.close() == 0


def test_cancel_request_cancels_an_async_handler(spawn: Any) -> None:
    hook = spawn(
        """
        @app.before_tool
        async def a(call):
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                print("handler saw the cancellation", file=sys.stderr, flush=True)
                raise
        @app.after_tool
        async def b(out): return None
        """
    )
    slow = hook.start("hook.before_tool", CALL, msg_id="slow-1")
    time.sleep(0.1)
    hook.notify("$/cancel_request", {"id": slow})
    assert hook.response(slow)["error"]["code"] == -32800
    assert hook.stderr_contains("handler saw the cancellation")
    assert hook.call("after_tool", OUTPUT) == {"action": "continue"}
    hook.notify("$/cancel_request", {"id": slow})  # already answered: ignored
    assert hook.close() == 0
    assert [m.get("id") for m in hook.messages].count(slow) == 1


def test_cancel_request_for_a_running_sync_handler_discards_its_result(spawn: Any) -> None:
    hook = spawn(
        """
        @app.before_tool
        def a(call):
            time.sleep(0.5)
            print("sync handler finished", file=sys.stderr, flush=True)
            return deny("too late")
        """
    )
    slow = hook.start("hook.before_tool", CALL, msg_id=41)
    time.sleep(0.1)
    hook.notify("$/cancel_request", {"id": 41})
    assert hook.response(41)["error"]["code"] == -32800
    assert hook.stderr_contains("sync handler finished")
    after = hook.start("hook.before_tool", CALL)
    assert hook.response(after, timeout=10)["result"]["reason"] == "too late"
    assert [m.get("id") for m in hook.messages].count(slow) == 1  # the late result was dropped
    assert hook.close() == 0


def test_events_run_in_order_and_match_patterns(spawn: Any, tmp_path: Path) -> None:
    out = tmp_path / "events.txt"
    hook = spawn(
        f"""
        log = open({str(out)!r}, "a")
        @app.on_event("agent.tool.*")
        def tool(event: RuntimeEvent):
            time.sleep(0.01)
            log.write("tool " + event.kind + "\\n"); log.flush()
        @app.on_event("agent.turn.start", "llm.*")
        async def other(event: RuntimeEvent):
            log.write("other " + event.kind + "\\n"); log.flush()
        """
    )
    kinds = ["agent.tool.exec_start", "agent.tool", "agent.toolbox", "llm.call", "agent.turn.start", "agent.tool.end"]
    for n, kind in enumerate(kinds):
        hook.notify("hook.runtime_event", {"id": f"e{n}", "kind": kind, "time": "t", "payload": {}})
    assert hook.close() == 0
    assert out.read_text().splitlines() == [
        "tool agent.tool.exec_start",
        "other llm.call",
        "other agent.turn.start",
        "tool agent.tool.end",
    ]


def test_a_large_line_is_served(spawn: Any) -> None:
    hook = spawn("@app.after_tool\ndef a(out): return modify_result(for_llm=str(len(out.for_llm)))\n")
    big = "x" * (5 * 1024 * 1024)
    assert hook.call("after_tool", {"tool": "t", "result": {"for_llm": big}}, timeout=30) == {
        "action": "modify",
        "result": {"result": {"for_llm": str(len(big))}},
    }
    assert hook.close() == 0


STUCK = """
@app.before_tool
def stuck(call):
    time.sleep(30)
@app.after_tool
async def stuck_async(out):
    await asyncio.sleep(30)
"""

# The same without asyncio: served with threads alone.
SYNC_STUCK = """
@app.before_tool
def stuck(call):
    time.sleep(30)
@app.after_tool
def stuck_too(out):
    time.sleep(30)
"""

STUCK_HOOKS = pytest.mark.parametrize(
    ("header", "body"), [(HEADER, STUCK), (SYNC_HEADER, SYNC_STUCK)], ids=["with a loop", "threads only"]
)


def start_stuck(spawn: Any, header: str, body: str) -> HookProcess:
    hook: HookProcess = spawn(body, header=header)
    hook.start("hook.before_tool", CALL)
    hook.start("hook.after_tool", OUTPUT)
    time.sleep(0.2)
    return hook


@STUCK_HOOKS
def test_stdin_eof_exits_promptly_with_status_0_despite_stuck_handlers(spawn: Any, header: str, body: str) -> None:
    hook = start_stuck(spawn, header, body)
    started = time.monotonic()
    assert hook.close(timeout=10) == 0
    assert time.monotonic() - started < EXIT_BOUND


@STUCK_HOOKS
def test_sigterm_exits_promptly_with_status_0(spawn: Any, header: str, body: str) -> None:
    hook = start_stuck(spawn, header, body)
    started = time.monotonic()
    assert hook.terminate(timeout=10) == 0
    assert time.monotonic() - started < EXIT_BOUND


def test_a_sync_only_hook_sigint_exits_with_status_0(spawn: Any) -> None:
    hook = spawn(SYNC_STUCK, header=SYNC_HEADER)
    hook.proc.send_signal(signal.SIGINT)
    assert hook.proc.wait(10) == 0
    hook.kill()  # collects the rest of stderr
    assert "Traceback" not in hook.stderr()


def test_sigterm_while_idle_exits_with_status_0(spawn: Any) -> None:
    hook = spawn("@app.before_tool\ndef a(call): return None\n")
    hook.proc.send_signal(signal.SIGTERM)
    assert hook.proc.wait(10) == 0


def test_work_in_flight_at_eof_is_finished_and_answered(spawn: Any) -> None:
    hook = spawn("@app.before_tool\ndef a(call):\n    time.sleep(0.05)\n    return deny('done')\n")
    ids = [hook.start("hook.before_tool", CALL) for _ in range(3)]
    assert hook.close() == 0
    for msg_id in ids:
        assert hook.response(msg_id)["result"] == {"action": "deny_tool", "reason": "done"}
