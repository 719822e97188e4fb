"""Helpers, their wire form per stage, and the legality errors."""

from __future__ import annotations

import copy
import pickle
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from hookhost_sdk import (
    App,
    Decision,
    IllegalResult,
    LifecycleAnswer,
    LlmResponse,
    ToolCall,
    ToolOutput,
    abort,
    abstain,
    allow,
    approve,
    ask,
    context,
    continue_,
    deny,
    modify,
    modify_arguments,
    modify_response,
    modify_result,
    refuse,
    respond,
    system_message,
)
from hookhost_sdk.results import to_wire
from hookhost_sdk.schema import STAGES, ProtocolError, decode_result

INTERCEPTORS = ["before_llm", "after_llm", "before_tool", "after_tool"]


@pytest.mark.parametrize(
    ("stage", "answer", "wire"),
    [
        ("before_tool", continue_(), {"action": "continue"}),
        ("before_tool", None, {"action": "continue"}),
        ("after_llm", None, {"action": "continue"}),
        ("before_tool", modify(call={"arguments": {"command": "ls -h"}}), {"action": "modify", "call": {"arguments": {"command": "ls -h"}}}),
        ("before_tool", modify({"arguments": {"cwd": None}}), {"action": "modify", "call": {"arguments": {"cwd": None}}}),
        ("before_tool", modify_arguments(command="ls -h"), {"action": "modify", "call": {"arguments": {"command": "ls -h"}}}),
        ("before_tool", modify_arguments({"a-b": 1}, c=2), {"action": "modify", "call": {"arguments": {"a-b": 1, "c": 2}}}),
        ("before_llm", modify(request={"options": {"temperature": 0}}), {"action": "modify", "request": {"options": {"temperature": 0}}}),
        ("before_llm", modify({"options": {"temperature": 0}}), {"action": "modify", "request": {"options": {"temperature": 0}}}),
        ("after_llm", modify_response(content="Hello"), {"action": "modify", "response": {"response": {"content": "Hello"}}}),
        ("after_tool", modify_result(for_llm="[x]"), {"action": "modify", "result": {"result": {"for_llm": "[x]"}}}),
        ("after_tool", modify(result={"result": {"for_llm": "[x]"}}), {"action": "modify", "result": {"result": {"for_llm": "[x]"}}}),
        ("before_tool", respond("cached"), {"action": "respond", "result": {"for_llm": "cached"}}),
        (
            "before_tool",
            respond("boom", for_user="it broke", silent=True, is_error=True),
            {"action": "respond", "result": {"for_llm": "boom", "for_user": "it broke", "silent": True, "is_error": True}},
        ),
        (
            "before_tool",
            respond({"for_llm": "A", "for_user": "a.txt", "silent": False, "extra": 1}),
            {"action": "respond", "result": {"for_llm": "A", "for_user": "a.txt", "extra": 1}},
        ),
        ("before_tool", deny("no"), {"action": "deny_tool", "reason": "no"}),
        ("before_tool", ask("deletes files"), {"action": "ask", "reason": "deletes files"}),
        ("before_tool", ask(), {"action": "ask"}),
        (
            "before_tool",
            ask("r").with_context("one").with_context("two"),
            {"action": "ask", "reason": "r", "additional_context": "one\ntwo"},
        ),
        ("before_tool", continue_().with_context("c"), {"action": "continue", "additional_context": "c"}),
        (
            "after_tool",
            modify_result(for_llm="[x]").with_context("redacted"),
            {"action": "modify", "result": {"result": {"for_llm": "[x]"}}, "additional_context": "redacted"},
        ),
        ("after_tool", context("c"), {"action": "continue", "additional_context": "c"}),
        ("before_llm", abort("stop"), {"action": "abort_turn", "reason": "stop"}),
        ("after_tool", abort(hard=True), {"action": "hard_abort"}),
        ("before_tool", abort("halt", hard=True), {"action": "hard_abort", "reason": "halt"}),
        ("approve_tool", approve(), {"approved": True}),
        ("approve_tool", approve("read-only"), {"approved": True, "reason": "read-only"}),
        ("approve_tool", refuse("not listed"), {"approved": False, "reason": "not listed"}),
        # A hook that does not decide abstains; it never approves.
        ("approve_tool", abstain(), {"action": "continue"}),
        ("approve_tool", None, {"action": "continue"}),
        ("approve_tool", continue_(), {"action": "continue"}),
        ("before_tool", allow(), {"action": "allow"}),
        ("before_tool", allow("read-only"), {"action": "allow", "reason": "read-only"}),
        (
            "before_tool",
            allow("ok", call={"arguments": {"command": "ls -h"}}).with_context("c"),
            {"action": "allow", "reason": "ok", "call": {"arguments": {"command": "ls -h"}}, "additional_context": "c"},
        ),
        ("before_tool", {"action": "deny_tool", "reason": "plain dict"}, {"action": "deny_tool", "reason": "plain dict"}),
        ("approve_tool", {"approved": True}, {"approved": True}),
        ("approve_tool", {"action": ""}, {"action": ""}),
    ],
)
def test_helper_wire_form(stage: str, answer: Any, wire: dict[str, Any]) -> None:
    assert to_wire(stage, answer) == wire
    decode_result(stage, wire)  # and the host will accept it


@pytest.mark.parametrize(
    ("stage", "answer", "message"),
    [
        ("after_llm", respond("x"), "respond() is not allowed at after_llm"),
        ("before_llm", deny("x"), "deny() is not allowed at before_llm"),
        ("after_tool", deny("x"), "deny() is not allowed at after_tool"),
        ("approve_tool", deny("x"), "deny() is not allowed at approve_tool"),
        ("approve_tool", abort("x"), "abort() is not allowed at approve_tool"),
        ("approve_tool", modify({"a": 1}), "modify() is not allowed at approve_tool"),
        ("approve_tool", ask("x"), "ask() is not allowed at approve_tool"),
        ("approve_tool", allow(), "allow() is not allowed at approve_tool"),
        ("before_tool", approve(), "approve() is not allowed at before_tool"),
        ("before_tool", abstain(), "abstain() is not allowed at before_tool; it belongs to approve_tool"),
        ("after_tool", allow(), "allow() is not allowed at after_tool"),
        ("after_tool", {"action": "allow"}, "action `allow` is not allowed at after_tool"),
        ("before_llm", {"action": "allow"}, "action `allow` is not allowed at before_llm"),
        ("after_llm", refuse("x"), "refuse() is not allowed at after_llm"),
        ("after_tool", modify(call={"a": 1}), "modify(call=...) is not allowed at after_tool; its patch key is `result`"),
        ("before_tool", modify_result(for_llm="x"), "modify_result() is not allowed at before_tool"),
        ("after_tool", modify_arguments(a=1), "modify_arguments() is not allowed at after_tool"),
        ("before_llm", modify_response(content="x"), "modify_response() is not allowed at before_llm"),
        ("after_llm", {"action": "respond", "result": {"for_llm": "x"}}, "action `respond` is not allowed at after_llm"),
        ("before_tool", {"action": "explode"}, 'unknown action "explode"'),
        ("approve_tool", {}, "missing field `approved` (or `action: \"continue\"`"),
        ("approve_tool", {"action": "modify"}, "action `modify` is not allowed at approve_tool"),
        ("approve_tool", {"approved": None}, "invalid type: null, expected a boolean"),
        ("before_tool", "continue", "must return a helper"),
        ("after_tool", ask("x"), "ask() is not allowed at after_tool"),
        ("before_llm", continue_().with_context("c"), "with_context() is not allowed at before_llm"),
        ("before_tool", deny("no").with_context("c"), "with_context() is not allowed with deny()"),
        ("before_tool", context("c") + system_message("m"), "is not allowed at before_tool; it belongs to lifecycle"),
        ("before_tool", True, "must return a helper"),
    ],
)
def test_illegal_answers_raise_a_clear_error(stage: str, answer: Any, message: str) -> None:
    with pytest.raises(IllegalResult) as err:
        to_wire(stage, answer)
    assert message in str(err.value)


def test_helpers_reject_bad_arguments() -> None:
    with pytest.raises(TypeError):
        modify()
    with pytest.raises(TypeError):
        modify({"a": 1}, call={"b": 2})
    with pytest.raises(TypeError):
        modify(call={}, result={})
    with pytest.raises(TypeError):
        modify(patch={"a": 1})  # not a stage key
    with pytest.raises(TypeError):
        modify("ls -h")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        deny(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        respond({"for_llm": "x"}, for_user="y")
    with pytest.raises(IllegalResult, match="missing field `for_llm`"):
        respond({"for_user": "x"})
    with pytest.raises(TypeError):
        allow(call="ls -h")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        allow(403)  # type: ignore[arg-type]


def test_allow_and_abstain_decode_as_the_host_does() -> None:
    """Canonical decisions as in spec/vectors (protocol/src/action.rs)."""
    patch = {"arguments": {"command": "ls -h"}}
    assert decode_result("before_tool", {"action": "allow"}) == {"action": "allow", "patch": None, "reason": None}
    assert decode_result("before_tool", {"action": "allow", "reason": "ok", "call": patch, "additional_context": "c"}) == {
        "action": "allow",
        "patch": patch,
        "reason": "ok",
        "additional_context": "c",
    }
    with pytest.raises(ProtocolError) as err:
        decode_result("before_tool", {"action": "block"})
    assert str(err.value) == (
        'unknown action "block" (expected continue, modify, respond, deny_tool, ask, allow, abort_turn or hard_abort)'
    )
    with pytest.raises(ProtocolError, match="action `allow` is not allowed at lifecycle"):
        decode_result("lifecycle", {"action": "allow"})
    # approve_tool: `approved` decides, whatever else is there; `continue` alone abstains.
    assert decode_result("approve_tool", {"approved": True, "action": "hard_abort"}) == {"approved": True, "reason": None}
    assert decode_result("approve_tool", {"action": "continue", "reason": "not mine"}) == {"action": "continue"}
    with pytest.raises(ProtocolError, match="missing field `approved`"):
        decode_result("approve_tool", {"action": None})
    with pytest.raises(ProtocolError, match='unknown action "explode"'):
        decode_result("approve_tool", {"approved": True, "action": "explode"})
    for answer in (abstain(), allow()):
        with pytest.raises(IllegalResult, match="is not allowed at lifecycle"):
            to_wire("lifecycle", answer, "session_start")


@pytest.mark.parametrize("stage", INTERCEPTORS)
def test_abort_and_continue_are_legal_at_every_interceptor(stage: str) -> None:
    for answer in (continue_(), abort("x"), abort(hard=True), modify({})):
        decode_result(stage, to_wire(stage, answer))


def test_decorators_register_stages_and_hello_lists_exactly_them() -> None:
    app = App("x")
    assert app.hello_result() == {"name": "x", "version": 1, "intercept": [], "observe": []}

    @app.after_tool
    def one(output: ToolOutput) -> None: ...

    @app.before_llm
    async def two(request: Any) -> None: ...

    @app.on_event("agent.*")
    def three(event: Any) -> None: ...

    @app.on_event("llm.*", "agent.*")
    async def four(event: Any) -> None: ...

    hello = app.hello_result()
    assert hello["intercept"] == ["before_llm", "after_tool"]  # the spec's stage order
    assert hello["observe"] == ["agent.*", "llm.*"]
    assert app.stage_handlers["before_llm"].is_async and not app.stage_handlers["after_tool"].is_async
    assert [h.fn for h in app.handlers_for_event("agent.turn.start")] == [three, four]
    assert [h.fn for h in app.handlers_for_event("llm.call")] == [four]
    assert app.handlers_for_event("agentx.y") == []
    with pytest.raises(ValueError, match="already has a handler"):
        app.after_tool(one)


@pytest.mark.parametrize("pattern", ["turn_ends", ".*", "agent*", "a.*.b", "*.x"])
def test_bad_event_patterns_fail_at_registration(pattern: str) -> None:
    with pytest.raises(ValueError, match="bad observe pattern"):
        App("x").on_event(pattern)


def test_all_stage_decorators_exist() -> None:
    app = App("x")
    for stage in STAGES:
        if stage == "lifecycle":
            app.lifecycle("session_start")(lambda params: None)
        else:
            getattr(app, stage)(lambda params: None)
    assert app.hello_result()["intercept"] == list(STAGES)


def test_typed_params_are_the_dicts_with_names_and_defaults() -> None:
    call = ToolCall({"tool": "shell", "meta": {"turn_id": "t"}, "x_extra": 1})
    assert call.tool == "shell" and call.arguments == {} and call.meta == {"turn_id": "t"}
    assert call.tool_call_id is None and call["x_extra"] == 1
    out = ToolOutput({"tool": "shell", "result": {"for_llm": "x", "is_error": True}, "duration_ms": 3})
    assert out.for_llm == "x" and out.is_error and out.for_user is None and out.duration_ms == 3
    resp = LlmResponse({"model": "m", "response": {}})
    assert resp.content == "" and resp.tool_calls == []


def test_answers_are_immutable_values() -> None:
    # What a frozen dataclass gave, kept without importing dataclasses.
    answer = deny("no")
    assert answer == deny("no") and answer != deny("yes") and answer != ask("no")
    assert hash(approve("ok")) == hash(approve("ok"))
    assert context("a") + system_message("b") == LifecycleAnswer(additional_context="a", system_message="b")
    with pytest.raises(AttributeError):
        answer.reason = "changed"
    with pytest.raises(AttributeError):
        del answer.reason
    assert copy.copy(answer) == answer and pickle.loads(pickle.dumps(answer)) == answer
    assert repr(continue_()).startswith("Decision(action='continue', patch=None,")
    assert repr(context("a")) == (
        "LifecycleAnswer(block=False, reason=None, additional_context='a', system_message=None, summary=None)"
    )
    match answer:
        case Decision("deny_tool", reason=reason):
            assert reason == "no"
        case _:
            pytest.fail("Decision does not match by position and keyword")


def test_the_installed_distribution_is_complete() -> None:
    """`pip install ./sdk-python` (done by scripts/test) must ship every module and py.typed."""
    try:
        files = metadata.files("hookhost-sdk")
    except metadata.PackageNotFoundError:
        pytest.skip("hookhost-sdk is not installed in this environment (scripts/test installs it)")
    shipped = {str(f).replace("\\", "/") for f in files or []}
    source = Path(__file__).resolve().parents[1] / "src" / "hookhost_sdk"
    for path in sorted(source.iterdir()):
        if path.suffix in (".py", ".typed"):
            assert f"hookhost_sdk/{path.name}" in shipped, f"{path.name} is missing from the wheel"
