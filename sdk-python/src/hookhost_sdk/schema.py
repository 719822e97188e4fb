"""Shape checks for what crosses the wire, on the hook's side.

The host already validates the params it sends, so why check them again?
Because handlers get typed accessors (``call.tool`` is a ``str``) and a
hook should fail one call loudly (-32602) rather than crash deep inside a
handler on a value of the wrong type. Results are checked for the opposite
reason: a handler that returns a plain dict the host would reject should get
a clear error from the SDK, not a silent ``on_error`` on the host side.

Error texts follow the reference implementation (serde's wording) so that
messages read the same whichever side reports them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = [
    "ProtocolError",
    "STAGES",
    "PATCH_KEYS",
    "INTERCEPTOR_ACTIONS",
    "check_params",
    "decode_result",
    "decode_hello_result",
    "decode_tool_result",
    "check_pattern",
    "pattern_matches",
    "LIFECYCLE_EVENTS",
    "REQUEST_EVENTS",
    "BLOCKING_EVENTS",
    "CONTEXT_EVENTS",
    "SUMMARY_EVENTS",
    "check_lifecycle_decision",
]

HOST_VERSION = 1

#: The stages, in the order the protocol lists them (lifecycle last, as it was added last).
STAGES: tuple[str, ...] = ("before_llm", "after_llm", "before_tool", "after_tool", "approve_tool", "lifecycle")

#: Every lifecycle event, in the order the spec lists them.
LIFECYCLE_EVENTS: tuple[str, ...] = (
    "session_start",
    "session_end",
    "user_prompt_submit",
    "turn_start",
    "turn_end",
    "stop",
    "subagent_start",
    "subagent_stop",
    "pre_compact",
    "notification",
    "on_error",
    "on_max_iterations",
    "before_compaction",
    "after_compaction",
)
#: Events sent as ``hook.lifecycle`` requests; the others arrive as runtime
#: events of kind ``lifecycle.<event>``.
REQUEST_EVENTS: tuple[str, ...] = (
    "session_start",
    "user_prompt_submit",
    "turn_start",
    "stop",
    "subagent_start",
    "subagent_stop",
    "pre_compact",
    "before_compaction",
)
#: Request events a hook may answer with ``block``. At ``stop`` and
#: ``subagent_stop`` a block means "keep going": its reason is the agent's
#: next instruction.
BLOCKING_EVENTS: tuple[str, ...] = (
    "user_prompt_submit",
    "stop",
    "subagent_start",
    "subagent_stop",
    "pre_compact",
    "before_compaction",
)
#: Request events whose answer may carry ``additional_context`` (at
#: ``pre_compact``, instructions for the compaction).
CONTEXT_EVENTS: tuple[str, ...] = ("session_start", "user_prompt_submit", "turn_start", "pre_compact")
#: Request events whose answer may carry ``summary``.
SUMMARY_EVENTS: tuple[str, ...] = ("before_compaction",)

#: The member of an interceptor's result that carries its merge patch.
PATCH_KEYS: dict[str, str] = {
    "before_llm": "request",
    "after_llm": "response",
    "before_tool": "call",
    "after_tool": "result",
}

#: Which actions each interceptor stage allows (section 6 of the spec).
INTERCEPTOR_ACTIONS: dict[str, frozenset[str]] = {
    "before_llm": frozenset({"continue", "modify", "abort_turn", "hard_abort"}),
    "after_llm": frozenset({"continue", "modify", "abort_turn", "hard_abort"}),
    "before_tool": frozenset({"continue", "modify", "respond", "deny_tool", "ask", "allow", "abort_turn", "hard_abort"}),
    "after_tool": frozenset({"continue", "modify", "abort_turn", "hard_abort"}),
}
_ALL_ACTIONS = INTERCEPTOR_ACTIONS["before_tool"]
#: The actions after which the chain goes on, so a result's
#: ``additional_context`` is kept (before_tool and after_tool).
_CONTEXT_ACTIONS = frozenset({"continue", "modify", "ask", "allow"})
_EXPECTED_ACTIONS = "continue, modify, respond, deny_tool, ask, allow, abort_turn or hard_abort"


class ProtocolError(ValueError):
    """A value does not have the shape the protocol requires."""


# --- serde-style messages ---------------------------------------------------


def _unexpected(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean `{'true' if value else 'false'}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{value}`"
    if isinstance(value, str):
        return "string " + _quote(value)
    if isinstance(value, list):
        return "sequence"
    return "map"


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _invalid_type(value: Any, expected: str) -> ProtocolError:
    return ProtocolError(f"invalid type: {_unexpected(value)}, expected {expected}")


# --- tiny combinators -------------------------------------------------------

Check = Callable[[Any], None]


def _string(value: Any) -> None:
    if not isinstance(value, str):
        raise _invalid_type(value, "a string")


def _boolean(value: Any) -> None:
    if not isinstance(value, bool):
        raise _invalid_type(value, "a boolean")


def _mapping(value: Any) -> None:
    if not isinstance(value, dict):
        raise _invalid_type(value, "a map")


def _anything(value: Any) -> None:
    return None


def _unsigned(kind: str) -> Check:
    def check(value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _invalid_type(value, kind)
        if value < 0:
            raise ProtocolError(f"invalid value: integer `{value}`, expected {kind}")

    return check


def _nullable(check: Check) -> Check:
    def nullable(value: Any) -> None:
        if value is not None:
            check(value)

    return nullable


def _sequence(item: Check) -> Check:
    def check(value: Any) -> None:
        if not isinstance(value, list):
            raise _invalid_type(value, "a sequence")
        for element in value:
            item(element)

    return check


def _one_of(*variants: str) -> Check:
    def check(value: Any) -> None:
        _string(value)
        if value not in variants:
            listed = ", ".join(f"`{v}`" for v in variants)
            raise ProtocolError(f"unknown variant `{value}`, expected one of {listed}")

    return check


def _struct(name: str, fields: dict[str, tuple[Check, bool]]) -> Check:
    """An object with known members (checked when present) and unknown ones (kept).

    A ``null`` optional member reads as absent, as the spec asks of readers.
    """

    def check(value: Any) -> None:
        if not isinstance(value, dict):
            raise _invalid_type(value, f"struct {name}")
        for key, (member, required) in fields.items():
            if key in value and (required or value[key] is not None):
                member(value[key])
            elif required:
                raise ProtocolError(f"missing field `{key}`")

    return check


# --- the protocol's shapes --------------------------------------------------

_opt_str = _nullable(_string)
_u64 = _unsigned("u64")

_META = _struct(
    "Meta",
    {
        "agent_id": (_opt_str, False),
        "session_key": (_opt_str, False),
        "turn_id": (_opt_str, False),
        "parent_turn_id": (_opt_str, False),
        "transcript_path": (_opt_str, False),
        "cwd": (_opt_str, False),
        "permission_mode": (_opt_str, False),
        "model": (_opt_str, False),
        "tenant_id": (_opt_str, False),
        "user_id": (_opt_str, False),
        "iteration": (_nullable(_u64), False),
        "source": (_opt_str, False),
    },
)

_TOOL_RESULT = _struct(
    "ToolResult",
    {
        "for_llm": (_string, True),
        "for_user": (_opt_str, False),
        "silent": (_nullable(_boolean), False),
        "is_error": (_nullable(_boolean), False),
    },
)

_MESSAGE = _struct("Message", {"role": (_string, True), "content": (_anything, False)})

_COMMON = {
    "meta": (_META, False),
    "channel": (_opt_str, False),
    "chat_id": (_opt_str, False),
}

_TOOL_CALL_FIELDS = {
    **_COMMON,
    "tool": (_string, True),
    "arguments": (_mapping, False),
    "tool_call_id": (_opt_str, False),
}

def _event_source(value: Any) -> None:
    """A runtime event's ``source``: a name, or PicoClaw's ``{component, name}``."""
    if value is None or isinstance(value, str):
        return
    if isinstance(value, dict) and isinstance(value.get("component"), str):
        _opt_str(value.get("name"))
        return
    raise ProtocolError(f"data {_unexpected(value)} did not match any variant of untagged enum EventSource")


_PARAMS: dict[str, Check] = {
    "hook.before_llm": _struct(
        "BeforeLlmParams",
        {
            **_COMMON,
            "model": (_string, True),
            "messages": (_sequence(_MESSAGE), False),
            "tools": (_sequence(_anything), False),
            "options": (_mapping, False),
        },
    ),
    "hook.after_llm": _struct(
        "AfterLlmParams",
        {
            **_COMMON,
            "model": (_string, True),
            "response": (
                _struct(
                    "LlmResponse",
                    {
                        "content": (_string, False),
                        "tool_calls": (_sequence(_anything), False),
                        "finish_reason": (_opt_str, False),
                        "usage": (_anything, False),
                    },
                ),
                True,
            ),
        },
    ),
    "hook.before_tool": _struct("ToolCall", _TOOL_CALL_FIELDS),
    "hook.approve_tool": _struct("ToolCall", _TOOL_CALL_FIELDS),
    "hook.after_tool": _struct(
        "AfterToolParams",
        {**_TOOL_CALL_FIELDS, "result": (_TOOL_RESULT, True), "duration_ms": (_nullable(_u64), False)},
    ),
    "hook.hello": _struct(
        "HelloParams",
        {
            "name": (_string, True),
            "version": (_unsigned("u32"), True),
            "modes": (_nullable(_sequence(_string)), False),
            "host": (_nullable(_struct("HostInfo", {"name": (_string, True), "version": (_string, True)})), False),
        },
    ),
    "hook.lifecycle": _struct(
        "LifecycleParams",
        {
            "event": (_one_of(*LIFECYCLE_EVENTS), True),
            "meta": (_META, False),
            "payload": (_mapping, False),
        },
    ),
    "hook.runtime_event": _struct(
        "RuntimeEvent",
        {
            "id": (_string, True),
            "kind": (_string, True),
            "time": (_string, True),
            "payload": (_anything, False),
            "source": (_event_source, False),
            "scope": (_nullable(_META), False),
            "severity": (_nullable(_one_of("debug", "info", "warn", "error")), False),
        },
    ),
}


def _check_id(value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ProtocolError(f"data {_unexpected(value)} did not match any variant of untagged enum Id")


_PARAMS["$/cancel_request"] = _struct("CancelParams", {"id": (_check_id, True)})


def check_params(method: str, params: Any) -> None:
    """Raise :class:`ProtocolError` unless ``params`` fit ``method``.

    Methods this module does not know are accepted as they are: the SDK
    answers them -32601 before their params matter.
    """
    check = _PARAMS.get(method)
    if check is not None:
        check(params)
    if method == "hook.lifecycle" and params["event"] not in REQUEST_EVENTS:
        event = params["event"]
        raise ProtocolError(
            f"event `{event}` is not a request event; it reaches hooks as the runtime event `lifecycle.{event}`"
        )


# --- results ----------------------------------------------------------------


def decode_tool_result(value: Any) -> dict[str, Any]:
    """Check a tool result and return its canonical form.

    Canonical: ``for_llm`` always, ``for_user`` only when a string, ``silent``
    and ``is_error`` only when true, unknown members kept.
    """
    _TOOL_RESULT(value)
    out = dict(value)
    for key in ("for_user", "silent", "is_error"):
        if not out.get(key):
            if key == "for_user" and isinstance(out.get(key), str):
                continue  # an empty for_user string is still a value
            out.pop(key, None)
    return out


def decode_result(stage: str, value: Any, event: str | None = None) -> dict[str, Any]:
    """Decode a stage result the way the host will, returning the decision.

    The decision is the canonical form the spec's vectors use:
    ``{"action": "continue"}``, ``{"action": "modify", "patch": {...}}``,
    ``{"action": "allow", "patch": {...} | None, "reason": R}``,
    ``{"action": "respond", "result": {...}}``, ``{"action": A, "reason": R}``
    or, at approve_tool, ``{"approved": B, "reason": R}`` (or
    ``{"action": "continue"}`` when the hook abstains), or at lifecycle
    ``{"action": "continue"|"block", "reason": .., "additional_context": ..,
    "system_message": .., "summary": ..}`` (``None`` for absent members).
    At before_tool and after_tool a string ``additional_context`` sent with
    continue, modify, ask or allow is kept as the decision's
    ``additional_context``.
    Anything the host would reject raises :class:`ProtocolError` with the
    reason. At lifecycle, what an answer may say depends on the event: pass
    ``event`` (``params.event``) to check that too; without it only the
    shape is checked.
    """
    if not isinstance(value, dict):
        raise ProtocolError(f"malformed {stage} result: a result must be a JSON object")
    if stage == "lifecycle":
        return _decode_lifecycle(value, event)
    reason = value.get("reason")
    _opt_str(reason)
    if stage == "approve_tool":
        return _decode_approval(value, reason)
    if stage not in PATCH_KEYS:
        raise ProtocolError(f"unknown stage {stage!r}")
    action = value.get("action")
    _opt_str(action)
    context = value.get("additional_context") if stage in CONTEXT_STAGES else None
    _opt_str(context)
    if not action:
        action = "continue"
    _known_action(action)
    if action not in INTERCEPTOR_ACTIONS[stage]:
        raise ProtocolError(f"action `{action}` is not allowed at {stage}")
    key = PATCH_KEYS[stage]
    patch = value.get(key)
    if stage == "before_tool":
        # `result` is the respond payload here; its type is checked whatever the action.
        _nullable(_mapping)(patch)
        tool_result = value.get("result")
        if tool_result is not None:
            _TOOL_RESULT(tool_result)
    else:
        _nullable(_mapping)(patch)
    decision = _interceptor_decision(action, value, patch, reason)
    if context is not None and action in _CONTEXT_ACTIONS:
        decision["additional_context"] = context
    return decision


def _known_action(action: str) -> None:
    if action and action not in _ALL_ACTIONS:
        raise ProtocolError(f"unknown action {_quote(action)} (expected {_EXPECTED_ACTIONS})")


def _decode_approval(value: dict[str, Any], reason: Any) -> dict[str, Any]:
    """An approve_tool result: ``approved`` decides (any ``action`` is then
    ignored); without it, ``action: "continue"`` (or ``""``) abstains, and
    anything else is an error, never a silent approval or refusal."""
    action = value.get("action")
    _opt_str(action)
    _known_action(action or "")
    if "approved" in value:
        _boolean(value["approved"])  # `null` too: it is not a decision
        return {"approved": value["approved"], "reason": reason}
    if action is None:
        raise ProtocolError(
            "malformed approve_tool result: missing field `approved` "
            '(or `action: "continue"` to leave the decision to the agent)'
        )
    if action not in ("", "continue"):
        raise ProtocolError(f"action `{action}` is not allowed at approve_tool")
    return {"action": "continue"}


#: The interceptor stages whose results may carry ``additional_context``.
CONTEXT_STAGES: tuple[str, ...] = ("before_tool", "after_tool")


def _interceptor_decision(action: str, value: dict[str, Any], patch: Any, reason: Any) -> dict[str, Any]:
    """The canonical decision of a checked interceptor result."""
    if action == "continue":
        return {"action": "continue"}
    if action == "modify":
        return {"action": "modify", "patch": patch if patch is not None else {}}
    if action == "allow":
        return {"action": "allow", "patch": patch, "reason": reason}
    if action == "respond":
        if value.get("result") is None:
            raise ProtocolError("action `respond` needs a `result` object with `for_llm`")
        return {"action": "respond", "result": decode_tool_result(value["result"])}
    return {"action": action, "reason": reason}


_LIFECYCLE_TEXTS = ("reason", "additional_context", "system_message", "summary")


def _decode_lifecycle(value: dict[str, Any], event: str | None) -> dict[str, Any]:
    """Decode a ``hook.lifecycle`` result (protocol/src/action.rs, decode_lifecycle_result)."""
    if event is not None and event not in REQUEST_EVENTS:
        raise ProtocolError(f"lifecycle event `{event}` is not a request event and takes no result")
    action = value.get("action")
    # An action of the other stages gets the error it gets wherever it is not allowed.
    if isinstance(action, str) and action in _ALL_ACTIONS and action != "continue":
        raise ProtocolError(f"action `{action}` is not allowed at lifecycle")
    try:
        _opt_str(action)
        if action and action not in ("continue", "block"):
            raise ProtocolError(f"unknown lifecycle action {_quote(action)} (expected continue or block)")
        for key in _LIFECYCLE_TEXTS:
            _opt_str(value.get(key))
    except ProtocolError as exc:
        raise ProtocolError(f"malformed lifecycle result: {exc}") from None
    decision: dict[str, Any] = {"action": "block" if action == "block" else "continue"}
    for key in _LIFECYCLE_TEXTS:
        decision[key] = value.get(key)
    if event is not None:
        check_lifecycle_decision(event, decision)
    return decision


def check_lifecycle_decision(event: str, decision: dict[str, Any]) -> None:
    """Raise :class:`ProtocolError` unless a decoded lifecycle ``decision`` is legal at ``event``."""
    if event not in REQUEST_EVENTS:
        raise ProtocolError(f"lifecycle event `{event}` is not a request event and takes no result")
    if decision.get("action") == "block" and event not in BLOCKING_EVENTS:
        raise ProtocolError(f"action `block` is not allowed at lifecycle event `{event}`, which cannot be blocked")
    if decision.get("additional_context") is not None and event not in CONTEXT_EVENTS:
        raise ProtocolError(f"field `additional_context` is not allowed at lifecycle event `{event}`")
    if decision.get("summary") is not None and event not in SUMMARY_EVENTS:
        raise ProtocolError(f"field `summary` is not allowed at lifecycle event `{event}`")


def decode_hello_result(value: Any, host_version: int = HOST_VERSION) -> dict[str, Any]:
    """Decode and negotiate a hello result as the host does."""
    if not isinstance(value, dict):
        raise _invalid_type(value, "struct HelloResult")
    if "ok" in value:
        _nullable(_boolean)(value["ok"])
    _opt_str(value.get("name"))
    version = value.get("version")
    if version is not None:
        _unsigned("u32")(version)
    intercept = value.get("intercept")
    if intercept is not None:
        _sequence(_one_of(*STAGES))(intercept)
    observe = value.get("observe")
    if observe is not None:
        _sequence(_string)(observe)
        for pattern in observe:
            check_pattern(pattern)
    if value.get("ok") is False:
        raise ProtocolError("the hook refused the handshake (ok: false)")
    negotiated = 1 if version is None else version
    if not 1 <= negotiated <= host_version:
        raise ProtocolError(f"the hook speaks protocol version {negotiated}, the host supports {host_version}")
    return {"version": negotiated, "intercept": intercept, "observe": observe}


# --- observe patterns -------------------------------------------------------


#: PicoClaw's short names for its agent event kinds, as its ``observe``
#: lists accept them (spec section 4.3), with the kind each stands for.
SHORT_NAMES = {
    "turn_start": "agent.turn.start",
    "turn_end": "agent.turn.end",
    "llm_request": "agent.llm.request",
    "llm_delta": "agent.llm.delta",
    "llm_response": "agent.llm.response",
    "llm_retry": "agent.llm.retry",
    "context_compress": "agent.context.compress",
    "session_summarize": "agent.session.summarize",
    "tool_exec_start": "agent.tool.exec_start",
    "tool_exec_end": "agent.tool.exec_end",
    "tool_exec_skipped": "agent.tool.exec_skipped",
    "steering_injected": "agent.steering.injected",
    "follow_up_queued": "agent.follow_up.queued",
    "interrupt_received": "agent.interrupt.received",
    "subturn_spawn": "agent.subturn.spawn",
    "subturn_end": "agent.subturn.end",
    "subturn_result_delivered": "agent.subturn.result_delivered",
    "subturn_orphan": "agent.subturn.orphan",
    "error": "agent.error",
}

#: The spellings of "every event".
_EVERY = {"*", "all", ""}


def check_pattern(pattern: str) -> None:
    """Raise :class:`ProtocolError` unless ``pattern`` is an ``observe`` entry.

    That is ``*`` (or ``all`` or ``""``), ``prefix.*``, a dotted kind, or one
    of PicoClaw's short names (:data:`SHORT_NAMES`); any other name without
    a dot is unknown, since every kind is dotted.
    """
    if pattern in _EVERY or pattern in SHORT_NAMES:
        return
    if "." not in pattern and "*" not in pattern:
        raise ProtocolError(f"bad observe pattern: {_quote(pattern)}: unknown event name")
    stem = pattern[:-2] if pattern.endswith(".*") else pattern
    if stem == "" or "*" in stem:
        raise ProtocolError(f"bad observe pattern: {_quote(pattern)}")


def pattern_matches(pattern: str, kind: str) -> bool:
    """Whether an event of ``kind`` is matched by ``pattern`` (spec section 4.3)."""
    if pattern in _EVERY:
        return True
    pattern = SHORT_NAMES.get(pattern, pattern)
    if pattern.endswith(".*"):
        return kind.startswith(pattern[:-1])
    return kind == pattern
