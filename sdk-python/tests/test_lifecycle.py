"""Lifecycle events: @app.lifecycle, the helpers, legality per event, and a
real process answering hook.lifecycle."""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hookhost_sdk import (
    App,
    IllegalResult,
    LifecycleAnswer,
    LifecycleEvent,
    abort,
    block,
    context,
    continue_,
    deny,
    lifecycle_result,
    modify,
    summary,
    system_message,
)
from hookhost_sdk.results import to_wire
from hookhost_sdk.schema import (
    BLOCKING_EVENTS,
    CONTEXT_EVENTS,
    LIFECYCLE_EVENTS,
    REQUEST_EVENTS,
    ProtocolError,
    check_params,
    decode_hello_result,
    decode_result,
)
from hookhost_sdk.testing import HookError, HookProcess

SRC = Path(__file__).resolve().parents[1] / "src"

# --- registration and hello -------------------------------------------------------


def test_lifecycle_handlers_register_per_event_and_hello_intercepts_lifecycle() -> None:
    app = App("x")
    assert "lifecycle" not in app.hello_result()["intercept"]

    @app.lifecycle("session_start", "turn_start")
    def start(event: LifecycleEvent) -> None: ...

    @app.lifecycle("user_prompt_submit")
    async def prompt(event: LifecycleEvent) -> None: ...

    @app.before_tool
    def tool(call: Any) -> None: ...

    assert app.hello_result()["intercept"] == ["before_tool", "lifecycle"]
    assert decode_hello_result(app.hello_result())["intercept"] == ["before_tool", "lifecycle"]
    assert app.lifecycle_handlers["session_start"].fn is start
    assert app.lifecycle_handlers["turn_start"].fn is start
    assert app.lifecycle_handlers["user_prompt_submit"].is_async
    assert not app.lifecycle_handlers["session_start"].is_async
    assert set(app.lifecycle_handlers) == {"session_start", "turn_start", "user_prompt_submit"}
    with pytest.raises(ValueError, match="session_start already has a handler"):
        app.lifecycle("session_start")


@pytest.mark.parametrize("event", [e for e in LIFECYCLE_EVENTS if e not in REQUEST_EVENTS])
def test_a_non_request_event_fails_at_decoration_and_points_to_on_event(event: str) -> None:
    with pytest.raises(ValueError) as err:
        App("x").lifecycle("session_start", event)
    assert "is not a request" in str(err.value) and f'on_event("lifecycle.{event}")' in str(err.value)


def test_bad_lifecycle_decorations_fail_clearly() -> None:
    app = App("x")
    with pytest.raises(ValueError, match="unknown lifecycle event 'session_begin'"):
        app.lifecycle("session_begin")
    with pytest.raises(TypeError, match="at least one event"):
        app.lifecycle()
    with pytest.raises(TypeError, match="needs the events it handles"):
        app.lifecycle(lambda event: None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="twice"):
        app.lifecycle("turn_start", "turn_start")
    assert app.lifecycle_handlers == {}
    # Non-request events are observed as runtime events instead.
    app.on_event("lifecycle.*")(lambda event: None)
    assert app.hello_result()["observe"] == ["lifecycle.*"]


def test_the_params_view() -> None:
    event = LifecycleEvent({"event": "user_prompt_submit", "payload": {"prompt": "hi"}, "x": 1})
    assert event.event == "user_prompt_submit" and event.prompt == "hi" and event.meta == {} and event["x"] == 1
    bare = LifecycleEvent({"event": "turn_start", "meta": {"turn_id": "t"}})
    assert bare.payload == {} and bare.prompt is None and bare.meta == {"turn_id": "t"}


# --- helpers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("event", "answer", "wire"),
    [
        ("turn_start", None, {"action": "continue"}),
        ("turn_start", continue_(), {"action": "continue"}),
        ("session_start", context("repo: main"), {"action": "continue", "additional_context": "repo: main"}),
        ("session_start", "plain text is context", {"action": "continue", "additional_context": "plain text is context"}),
        ("user_prompt_submit", block("secret"), {"action": "block", "reason": "secret"}),
        ("subagent_start", block(), {"action": "block"}),
        ("pre_compact", system_message("compacting"), {"action": "continue", "system_message": "compacting"}),
        ("pre_compact", context("keep the plan"), {"action": "continue", "additional_context": "keep the plan"}),
        ("stop", block("run the tests first"), {"action": "block", "reason": "run the tests first"}),
        ("subagent_stop", block("check the other file"), {"action": "block", "reason": "check the other file"}),
        ("before_compaction", summary("we did x"), {"action": "continue", "summary": "we did x"}),
        (
            "user_prompt_submit",
            context("a") + system_message("b") + context("c"),
            {"action": "continue", "additional_context": "a\nc", "system_message": "b"},
        ),
        ("turn_start", continue_() + context("x"), {"action": "continue", "additional_context": "x"}),
        ("turn_start", context("x") + continue_(), {"action": "continue", "additional_context": "x"}),
        (
            "before_compaction",
            block("not now") + system_message("skipped"),
            {"action": "block", "reason": "not now", "system_message": "skipped"},
        ),
        (
            "before_compaction",
            lifecycle_result(summary="s", system_message="m"),
            {"action": "continue", "system_message": "m", "summary": "s"},
        ),
        (
            "user_prompt_submit",
            lifecycle_result(block=True, reason="r"),
            {"action": "block", "reason": "r"},
        ),
        ("user_prompt_submit", {"action": "block", "reason": "dict"}, {"action": "block", "reason": "dict"}),
        ("turn_start", {"additional_context": "dict"}, {"additional_context": "dict"}),
        ("turn_start", {}, {}),
    ],
)
def test_lifecycle_wire_form(event: str, answer: Any, wire: dict[str, Any]) -> None:
    assert to_wire("lifecycle", answer, event) == wire
    decode_result("lifecycle", wire, event)  # and the host will accept it


@pytest.mark.parametrize(
    ("event", "answer", "message"),
    [
        ("session_start", block("x"), "block() is not allowed at lifecycle event session_start"),
        ("turn_start", block(), "block() is not allowed at lifecycle event turn_start"),
        ("stop", context("x"), "context() (additional_context) is not allowed at lifecycle event stop"),
        ("before_compaction", "text", "not allowed at lifecycle event before_compaction"),
        ("session_start", summary("x"), "summary() is not allowed at lifecycle event session_start"),
        ("turn_start", deny("x"), "deny() is not allowed at lifecycle"),
        ("turn_start", abort("x"), "abort() is not allowed at lifecycle"),
        ("turn_start", modify({"a": 1}), "modify() is not allowed at lifecycle"),
        ("turn_start", {"action": "block"}, "action `block` is not allowed at lifecycle event `turn_start`"),
        ("pre_compact", {"summary": "s"}, "field `summary` is not allowed at lifecycle event `pre_compact`"),
        ("turn_start", {"action": "deny_tool"}, "action `deny_tool` is not allowed at lifecycle"),
        ("turn_start", {"action": "explode"}, 'unknown lifecycle action "explode"'),
        ("turn_start", {"system_message": 5}, "invalid type: integer `5`, expected a string"),
        ("turn_start", True, "must return a helper"),
        ("session_end", None, "not a lifecycle request event"),
    ],
)
def test_illegal_lifecycle_answers_raise_a_clear_error(event: str, answer: Any, message: str) -> None:
    with pytest.raises(IllegalResult) as err:
        to_wire("lifecycle", answer, event)
    assert message in str(err.value)


def test_lifecycle_helpers_are_illegal_at_the_other_stages() -> None:
    with pytest.raises(IllegalResult, match=r"context\(\) \+ system_message\(\) is not allowed at before_tool"):
        to_wire("before_tool", context("x") + system_message("y"))
    with pytest.raises(IllegalResult, match=r"block\(\) is not allowed at approve_tool"):
        to_wire("approve_tool", block("x"))


def test_lifecycle_helpers_reject_bad_arguments() -> None:
    with pytest.raises(TypeError, match="text must be a string"):
        context(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="reason must be a string"):
        block(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="two block"):
        block("a") + block("b")
    with pytest.raises(TypeError, match="two summary"):
        summary("a") + summary("b")
    with pytest.raises(TypeError, match="only meaningful with block=True"):
        lifecycle_result(reason="r")
    with pytest.raises(TypeError):
        context("x") + deny("y")  # type: ignore[operator]
    assert isinstance(block("a") + context("b"), LifecycleAnswer)


def test_every_legal_combination_decodes_at_the_host() -> None:
    for event in REQUEST_EVENTS:
        answer: LifecycleAnswer = system_message("m")
        if event in BLOCKING_EVENTS:
            answer = answer + block("b")
        if event in CONTEXT_EVENTS:
            answer = answer + context("c")
        if event == "before_compaction":
            answer = answer + summary("s")
        decision = decode_result("lifecycle", to_wire("lifecycle", answer, event), event)
        assert decision["system_message"] == "m"
        assert decision["action"] == ("block" if event in BLOCKING_EVENTS else "continue")


def test_lifecycle_params_are_checked() -> None:
    check_params("hook.lifecycle", {"event": "turn_start"})
    check_params("hook.lifecycle", {"event": "session_start", "payload": {"source": "resume"}, "meta": {}, "x": 1})
    for params, text in [
        ({}, "missing field `event`"),
        ({"event": "boot"}, "unknown variant `boot`"),
        ({"event": 5}, "invalid type: integer `5`, expected a string"),
        ({"event": "turn_start", "payload": [1]}, "invalid type: sequence, expected a map"),
        ({"event": "turn_start", "meta": {"iteration": -1}}, "expected u64"),
        ({"event": "turn_end"}, "event `turn_end` is not a request event; it reaches hooks as the runtime event `lifecycle.turn_end`"),
    ]:
        with pytest.raises(ProtocolError) as err:
            check_params("hook.lifecycle", params)
        assert text in str(err.value)


# --- a real process -------------------------------------------------------------------

HEADER = """\
import asyncio, sys
from hookhost_sdk import *
app = App("probe")
"""


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Any]:
    hooks: list[HookProcess] = []

    def start(body: str) -> HookProcess:
        script = tmp_path / f"hook{len(hooks)}.py"
        script.write_text(HEADER + textwrap.dedent(body) + "\napp.run()\n")
        env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(SRC)}
        hook = HookProcess([sys.executable, str(script)], env=env, cwd=tmp_path)
        hooks.append(hook)
        return hook

    yield start
    for hook in hooks:
        hook.kill()


LIFECYCLE_HOOK = """
@app.lifecycle("session_start")
def start(event: LifecycleEvent):
    return context(f"session from {event.payload.get('source', '?')}") + system_message("hello")

@app.lifecycle("user_prompt_submit")
async def prompt(event: LifecycleEvent):
    await asyncio.sleep(0)
    if "sk-" in (event.prompt or ""):
        return block("the prompt contains a secret")
    return None

@app.lifecycle("turn_start")
def turn(event):
    return event.meta.get("turn_id", "")  # plain text: additional context

@app.lifecycle("before_compaction")
def compact(event):
    return {"action": "continue", "summary": "dict summary"}

@app.lifecycle("stop")
def illegal(event):
    return context("stop takes no context")

@app.lifecycle("subagent_start")
async def illegal_async(event):
    return summary("not here")

@app.on_event("lifecycle.*")
def seen(event): print("observed", event.kind, file=sys.stderr, flush=True)
"""


def test_a_process_answers_lifecycle_requests(spawn: Any) -> None:
    hook = spawn(LIFECYCLE_HOOK)
    assert hook.hello_result["intercept"] == ["lifecycle"]
    assert hook.hello_result["observe"] == ["lifecycle.*"]
    assert hook.call("lifecycle", {"event": "session_start", "payload": {"source": "resume"}}) == {
        "action": "continue",
        "additional_context": "session from resume",
        "system_message": "hello",
    }
    secret = {"event": "user_prompt_submit", "payload": {"prompt": "my key is sk-123"}}
    assert hook.call("lifecycle", secret) == {"action": "block", "reason": "the prompt contains a secret"}
    assert hook.call("lifecycle", {"event": "user_prompt_submit", "payload": {"prompt": "hi"}}) == {"action": "continue"}
    assert hook.call("lifecycle", {"event": "turn_start", "meta": {"turn_id": "t-7"}}) == {
        "action": "continue",
        "additional_context": "t-7",
    }
    assert hook.call("lifecycle", {"event": "before_compaction"}) == {"action": "continue", "summary": "dict summary"}
    hook.notify("hook.runtime_event", {"id": "e1", "kind": "lifecycle.session_end", "time": "t", "payload": {}})
    assert hook.stderr_contains("observed lifecycle.session_end")
    assert hook.garbage == []
    assert hook.close() == 0


def test_illegal_lifecycle_answers_and_bad_params_are_error_replies(spawn: Any) -> None:
    hook = spawn(LIFECYCLE_HOOK)
    for params, text in [
        ({"event": "stop"}, "context() (additional_context) is not allowed at lifecycle event stop"),
        ({"event": "subagent_start"}, "summary() is not allowed at lifecycle event subagent_start"),
    ]:
        with pytest.raises(HookError) as err:
            hook.call("lifecycle", params)
        assert err.value.code == -32603 and text in str(err.value.message)
    for params, text in [
        ({"event": "boot"}, "unknown variant `boot`"),
        ({"event": "session_end"}, "event `session_end` is not a request event; it reaches hooks as the runtime event `lifecycle.session_end`"),
        ({"payload": {}}, "missing field `event`"),
    ]:
        with pytest.raises(HookError) as err:
            hook.call("lifecycle", params)
        assert err.value.code == -32602 and text in str(err.value.message)
    assert hook.call("lifecycle", {"event": "session_start"})["action"] == "continue"  # still serving
    assert hook.close() == 0


def test_a_request_event_without_a_handler_continues(spawn: Any) -> None:
    hook = spawn('@app.lifecycle("turn_start")\ndef t(event): return context("x")\n')
    assert hook.call("lifecycle", {"event": "session_start"}) == {"action": "continue"}
    assert hook.call("lifecycle", {"event": "turn_start"}) == {"action": "continue", "additional_context": "x"}
    assert hook.close() == 0


def test_without_lifecycle_handlers_the_method_is_unknown(spawn: Any) -> None:
    hook = spawn("@app.before_tool\ndef a(call): return None\n")
    assert "lifecycle" not in hook.hello_result["intercept"]
    assert hook.request("hook.lifecycle", {"event": "turn_start"})["error"]["code"] == -32601
    assert hook.close() == 0
