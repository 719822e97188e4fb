"""What a handler returns, and how it becomes a protocol result.

Handlers return small immutable :class:`Decision` values made by the helper
functions below (or a plain dict in protocol shape, or ``None`` for
continue). Which helpers a stage accepts is checked here, when the answer is
turned into its wire form: an illegal answer (``respond`` from after_llm,
``deny`` from before_llm, ``approve`` from an interceptor...) raises
:class:`IllegalResult`, which the server sends back as an error reply. The
host would reject such an answer anyway; failing in the SDK puts the reason
in the hook's own words and in its own stderr.

A hook approves only by saying so: :func:`allow` (before_tool) and
:func:`approve` (approve_tool). ``None`` and :func:`continue_` never
approve; at approve_tool they are :func:`abstain`, and the agent decides as
it would with no hook.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from .schema import (
    BLOCKING_EVENTS,
    CONTEXT_EVENTS,
    CONTEXT_STAGES,
    PATCH_KEYS,
    REQUEST_EVENTS,
    SUMMARY_EVENTS,
    ProtocolError,
    decode_result,
    decode_tool_result,
)

__all__ = [
    "Decision",
    "IllegalResult",
    "continue_",
    "modify",
    "modify_arguments",
    "modify_response",
    "modify_result",
    "respond",
    "deny",
    "ask",
    "allow",
    "abort",
    "approve",
    "refuse",
    "abstain",
    "LifecycleAnswer",
    "block",
    "context",
    "system_message",
    "summary",
    "lifecycle_result",
    "to_wire",
]


class IllegalResult(ValueError):
    """A handler's answer is not allowed at its stage, or is malformed."""


class _Value:
    """An immutable value compared, hashed, shown and copied by its fields,
    as a frozen dataclass is. Written out because importing ``dataclasses``
    (which imports ``inspect``) costs every hook about 5 ms of start-up.

    Subclasses name their fields in ``__match_args__`` (``__slots__`` is the
    same tuple) and set them with :meth:`_init`.
    """

    __slots__: tuple[str, ...] = ()

    def _init(self, *values: Any) -> None:
        for name, value in zip(self.__slots__, values, strict=True):
            object.__setattr__(self, name, value)

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def _replace(self, **changes: Any) -> Self:
        return type(self)(*(changes.get(name, getattr(self, name)) for name in self.__slots__))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Value) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"

    def __reduce__(self) -> tuple[type[Self], tuple[Any, ...]]:
        return type(self), self._fields()


class Decision(_Value):
    """A handler's answer, not yet tied to a stage.

    Build one with the helpers (:func:`continue_`, :func:`modify`,
    :func:`respond`, :func:`deny`, :func:`ask`, :func:`allow`,
    :func:`abort`, :func:`approve`, :func:`refuse`, :func:`abstain`) rather
    than directly, and add text for the model's context with
    :meth:`with_context`.
    """

    __match_args__ = ("action", "patch", "patch_key", "only_at", "result", "reason", "helper", "additional_context")
    __slots__ = __match_args__

    action: str
    patch: Mapping[str, Any] | None
    #: The stage key the patch was given under (``call=...``), checked later.
    patch_key: str | None
    #: Where the helper belongs, for helpers tied to one stage.
    only_at: str | None
    result: Mapping[str, Any] | None
    reason: str | None
    helper: str
    #: Text for the model's context (``additional_context``), before_tool
    #: and after_tool only, with continue, modify, ask or allow.
    additional_context: str | None

    def __init__(
        self,
        action: str,
        patch: Mapping[str, Any] | None = None,
        patch_key: str | None = None,
        only_at: str | None = None,
        result: Mapping[str, Any] | None = None,
        reason: str | None = None,
        helper: str = "",
        additional_context: str | None = None,
    ) -> None:
        self._init(action, patch, patch_key, only_at, result, reason, helper, additional_context)

    def with_context(self, text: str) -> Decision:
        """This answer plus ``text`` for the model's context.

        ``continue_().with_context("/tmp is cleared at boot")``. Taken at
        before_tool and after_tool with continue, modify, ask and allow (the
        chain goes on); called twice, the texts are joined with a newline.
        """
        added = _text(text, "with_context()", "text")
        return self._replace(additional_context=_join(self.additional_context, added))


_CONTINUE = Decision("continue", helper="continue_()")


def continue_() -> Decision:
    """Let the params pass unchanged. Returning ``None`` means the same.

    It approves nothing: at approve_tool it is :func:`abstain`.
    """
    return _CONTINUE


def modify(patch: Mapping[str, Any] | None = None, /, **keyed: Mapping[str, Any]) -> Decision:
    """Rewrite the params with a JSON merge patch.

    Either pass the patch over the params, ``modify({"arguments": {...}})``,
    or name the stage's key as the protocol does, ``modify(call={...})``
    (``request``, ``response``, ``call`` or ``result``). Members you leave out
    are kept; ``None`` deletes one.
    """
    if patch is not None and not keyed:
        return Decision("modify", patch=_object(patch, "modify()"), helper="modify()")
    if patch is not None or len(keyed) != 1:
        raise TypeError("modify() takes either one patch dict or one stage keyword (e.g. call={...})")
    ((key, value),) = keyed.items()
    if key not in PATCH_KEYS.values():
        raise TypeError(f"modify() got an unknown keyword {key!r}; use request, response, call or result")
    return Decision("modify", patch=_object(value, f"modify({key}=...)"), patch_key=key, helper=f"modify({key}=...)")


def modify_arguments(changes: Mapping[str, Any] | None = None, /, **kw: Any) -> Decision:
    """before_tool: merge ``changes`` into the call's ``arguments``."""
    merged = {**(changes or {}), **kw}
    return Decision("modify", patch={"arguments": merged}, only_at="before_tool", helper="modify_arguments()")


def modify_result(**fields: Any) -> Decision:
    """after_tool: change fields of the tool result (``for_llm``, ``for_user``, ...)."""
    return Decision("modify", patch={"result": fields}, only_at="after_tool", helper="modify_result()")


def modify_response(**fields: Any) -> Decision:
    """after_llm: change fields of the model's answer (``content``, ...)."""
    return Decision("modify", patch={"response": fields}, only_at="after_llm", helper="modify_response()")


def respond(
    for_llm: str | Mapping[str, Any],
    *,
    for_user: str | None = None,
    silent: bool = False,
    is_error: bool = False,
) -> Decision:
    """before_tool: answer in place of the tool; it does not run.

    Pass the text the model sees, or a whole tool result dict (e.g. one you
    cached from after_tool).
    """
    if isinstance(for_llm, Mapping):
        if for_user is not None or silent or is_error:
            raise TypeError("respond(): pass either a tool result dict or keyword fields, not both")
        try:
            result = decode_tool_result(dict(for_llm))
        except ProtocolError as exc:
            raise IllegalResult(f"respond(): bad tool result: {exc}") from None
    else:
        if not isinstance(for_llm, str):
            raise TypeError("respond(): for_llm must be a string")
        result = {"for_llm": for_llm}
        if for_user is not None:
            result["for_user"] = for_user
        if silent:
            result["silent"] = True
        if is_error:
            result["is_error"] = True
    return Decision("respond", result=result, only_at="before_tool", helper="respond()")


def deny(reason: str) -> Decision:
    """before_tool: do not run the tool; ``reason`` reaches the model."""
    return Decision("deny_tool", reason=_text(reason, "deny()"), only_at="before_tool", helper="deny()")


def ask(reason: str | None = None) -> Decision:
    """before_tool: let the user decide whether the tool runs; ``reason`` is shown to them.

    Not a refusal: the chain goes on (a later hook's deny still wins), and
    the agent runs the call if the user says yes.
    """
    text = None if reason is None else _text(reason, "ask()")
    return Decision("ask", reason=text, only_at="before_tool", helper="ask()")


def allow(reason: str | None = None, call: Mapping[str, Any] | None = None) -> Decision:
    """before_tool: go on, and approve the call: the agent may run it without asking the user.

    ``call`` is an optional merge patch over the params, as with
    ``modify(call=...)``; ``reason`` may be shown to the user. The chain
    goes on, and a later hook's ask, deny, respond or abort wins over it.
    A rewrite alone (:func:`modify`) is never an approval.
    """
    text = None if reason is None else _text(reason, "allow()")
    patch = None if call is None else _object(call, "allow(call=...)")
    return Decision("allow", patch=patch, only_at="before_tool", reason=text, helper="allow()")


def abort(reason: str | None = None, *, hard: bool = False) -> Decision:
    """End the current turn, or with ``hard=True`` the whole agent loop."""
    action = "hard_abort" if hard else "abort_turn"
    text = None if reason is None else _text(reason, "abort()")
    return Decision(action, reason=text, helper="abort()")


def approve(reason: str | None = None) -> Decision:
    """approve_tool: let the tool run, without asking the user."""
    text = None if reason is None else _text(reason, "approve()")
    return Decision("approve", reason=text, only_at="approve_tool", helper="approve()")


def refuse(reason: str) -> Decision:
    """approve_tool: do not let the tool run; ``reason`` reaches the model."""
    return Decision("refuse", reason=_text(reason, "refuse()"), only_at="approve_tool", helper="refuse()")


_ABSTAIN = Decision("abstain", only_at="approve_tool", helper="abstain()")


def abstain() -> Decision:
    """approve_tool: do not decide; the agent decides as it would with no hook (often: it asks the user).

    This is what an approve_tool handler that returns ``None`` (or
    :func:`continue_`) answers: a hook that does not decide never approves.
    Wire form: ``{"action": "continue"}``.
    """
    return _ABSTAIN


class LifecycleAnswer(_Value):
    """A lifecycle handler's answer: block, or continue with texts.

    Build one with :func:`block`, :func:`context`, :func:`system_message`,
    :func:`summary` or :func:`lifecycle_result`, and combine them with ``+``:
    ``context("x") + system_message("y")``. Two texts of the same kind are
    joined with a newline; two blocks or two summaries are an error.
    """

    __match_args__ = ("block", "reason", "additional_context", "system_message", "summary")
    __slots__ = __match_args__

    block: bool
    reason: str | None
    additional_context: str | None
    system_message: str | None
    summary: str | None

    def __init__(
        self,
        block: bool = False,
        reason: str | None = None,
        additional_context: str | None = None,
        system_message: str | None = None,
        summary: str | None = None,
    ) -> None:
        self._init(block, reason, additional_context, system_message, summary)

    def __add__(self, other: object) -> LifecycleAnswer:
        if isinstance(other, Decision) and other.action == "continue":
            return self
        if not isinstance(other, LifecycleAnswer):
            return NotImplemented
        if self.block and other.block:
            raise TypeError("cannot combine two block() answers")
        if self.summary is not None and other.summary is not None:
            raise TypeError("cannot combine two summary() answers")
        return LifecycleAnswer(
            block=self.block or other.block,
            reason=self.reason if self.block else other.reason,
            additional_context=_join(self.additional_context, other.additional_context),
            system_message=_join(self.system_message, other.system_message),
            summary=self.summary if self.summary is not None else other.summary,
        )

    def __radd__(self, other: object) -> LifecycleAnswer:
        if isinstance(other, Decision) and other.action == "continue":
            return self
        return NotImplemented

    @property
    def helper(self) -> str:
        """The helpers this answer was built with, for error messages."""
        names = [
            name
            for name, used in (
                ("block()", self.block),
                ("context()", self.additional_context is not None),
                ("system_message()", self.system_message is not None),
                ("summary()", self.summary is not None),
            )
            if used
        ]
        return " + ".join(names) or "lifecycle_result()"

    def to_result(self) -> dict[str, Any]:
        """The wire form, without checking it against an event."""
        out: dict[str, Any] = {"action": "block" if self.block else "continue"}
        if self.block and self.reason is not None:
            out["reason"] = self.reason
        for key in ("additional_context", "system_message", "summary"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


def _join(a: str | None, b: str | None) -> str | None:
    if a is None:
        return b
    if b is None:
        return a
    return f"{a}\n{b}"


def block(reason: str | None = None) -> LifecycleAnswer:
    """lifecycle (user_prompt_submit, stop, subagent_start, subagent_stop, pre_compact, before_compaction): stop the event.

    At stop and subagent_stop a block means "keep going": ``reason`` is the
    agent's next instruction. Look at ``payload["stop_hook_active"]`` (the
    previous stop was blocked) before blocking again; the host overrides a
    block after ``stop_block_limit`` in a row.
    """
    text = None if reason is None else _text(reason, "block()")
    return LifecycleAnswer(block=True, reason=text)


def context(text: str) -> LifecycleAnswer:
    """Add context for the model.

    lifecycle: session_start, user_prompt_submit, turn_start, pre_compact
    (compaction instructions). Returned alone from before_tool or after_tool
    it is ``continue_().with_context(text)``.
    """
    return LifecycleAnswer(additional_context=_text(text, "context()", "text"))


def system_message(text: str) -> LifecycleAnswer:
    """lifecycle (any request event): a message shown to the user."""
    return LifecycleAnswer(system_message=_text(text, "system_message()", "text"))


def summary(text: str) -> LifecycleAnswer:
    """lifecycle (before_compaction): the summary the agent uses in place of its own."""
    return LifecycleAnswer(summary=_text(text, "summary()", "text"))


def lifecycle_result(
    *,
    block: bool = False,
    reason: str | None = None,
    additional_context: str | None = None,
    system_message: str | None = None,
    summary: str | None = None,
) -> LifecycleAnswer:
    """lifecycle: every member at once, named as on the wire."""
    texts = {
        "reason": reason,
        "additional_context": additional_context,
        "system_message": system_message,
        "summary": summary,
    }
    for key, value in texts.items():
        if value is not None:
            _text(value, "lifecycle_result()", key)
    if reason is not None and not block:
        raise TypeError("lifecycle_result(): reason is only meaningful with block=True")
    return LifecycleAnswer(block, reason, additional_context, system_message, summary)


def to_wire(stage: str, answer: Any, event: str | None = None) -> dict[str, Any]:
    """Turn a handler's answer into the result object sent to the host.

    Raises :class:`IllegalResult` for anything the host would reject at
    ``stage`` (at lifecycle: at ``event``, the params' ``event``).
    """
    if stage == "lifecycle":
        return _lifecycle_to_wire(answer, event)
    if isinstance(answer, LifecycleAnswer):
        if stage in CONTEXT_STAGES and answer == LifecycleAnswer(additional_context=answer.additional_context):
            # context("x") alone at before_tool / after_tool: continue with context.
            return to_wire(stage, continue_().with_context(answer.additional_context or ""))
        raise IllegalResult(f"{answer.helper} is not allowed at {stage}; it belongs to lifecycle")
    if isinstance(answer, Decision):
        wire = _decision_to_wire(stage, answer)
        return _with_context(stage, answer, wire)
    if answer is None:
        return {"action": "continue"}  # at approve_tool: abstain(), never an approval
    if isinstance(answer, dict):
        try:
            decode_result(stage, answer)
        except ProtocolError as exc:
            raise IllegalResult(f"handler returned a bad {stage} result: {exc}") from None
        return answer
    raise IllegalResult(
        f"a {stage} handler must return a helper such as continue_(), a dict or None, not {type(answer).__name__}"
    )


def _decision_to_wire(stage: str, d: Decision) -> dict[str, Any]:
    if d.only_at is not None and d.only_at != stage:
        raise IllegalResult(f"{d.helper} is not allowed at {stage}; it belongs to {d.only_at}")
    if stage == "approve_tool":
        if d.action == "approve":
            return {"approved": True} if d.reason is None else {"approved": True, "reason": d.reason}
        if d.action == "refuse":
            return {"approved": False, "reason": d.reason}
        if d.action in ("abstain", "continue"):
            return {"action": "continue"}
        raise IllegalResult(
            f"{d.helper} is not allowed at approve_tool; return approve(), refuse(reason) or abstain()"
        )
    if d.action == "continue":
        return {"action": "continue"}
    if d.action == "modify":
        key = PATCH_KEYS[stage]
        if d.patch_key is not None and d.patch_key != key:
            raise IllegalResult(f"{d.helper} is not allowed at {stage}; its patch key is `{key}`")
        return {"action": "modify", key: d.patch}
    if d.action == "respond":
        return {"action": "respond", "result": d.result}
    out: dict[str, Any] = {"action": d.action}
    if d.reason is not None:
        out["reason"] = d.reason
    if d.action == "allow" and d.patch is not None:
        out["call"] = d.patch
    return out


def _with_context(stage: str, d: Decision, wire: dict[str, Any]) -> dict[str, Any]:
    """``wire`` with the answer's ``additional_context``, where the host keeps it."""
    if d.additional_context is None:
        return wire
    if stage not in CONTEXT_STAGES:
        raise IllegalResult(f"with_context() is not allowed at {stage}; only before_tool and after_tool take context")
    if d.action not in ("continue", "modify", "ask", "allow"):
        raise IllegalResult(f"with_context() is not allowed with {d.helper}: the chain stops, so the context is dropped")
    return {**wire, "additional_context": d.additional_context}


def _lifecycle_to_wire(answer: Any, event: str | None) -> dict[str, Any]:
    if event not in REQUEST_EVENTS:
        raise IllegalResult(f"{event!r} is not a lifecycle request event")
    if answer is None:
        return {"action": "continue"}
    if isinstance(answer, str):
        answer = context(answer)
    if isinstance(answer, Decision):
        if answer.action == "continue":
            return {"action": "continue"}
        raise IllegalResult(
            f"{answer.helper} is not allowed at lifecycle; return continue_(), block(), context(), "
            "system_message(), summary() or a combination"
        )
    if isinstance(answer, LifecycleAnswer):
        if answer.block and event not in BLOCKING_EVENTS:
            raise IllegalResult(
                f"block() is not allowed at lifecycle event {event}; only {', '.join(BLOCKING_EVENTS)} can be blocked"
            )
        if answer.additional_context is not None and event not in CONTEXT_EVENTS:
            raise IllegalResult(
                f"context() (additional_context) is not allowed at lifecycle event {event}; "
                f"only {', '.join(CONTEXT_EVENTS)} take context"
            )
        if answer.summary is not None and event not in SUMMARY_EVENTS:
            raise IllegalResult(
                f"summary() is not allowed at lifecycle event {event}; only {', '.join(SUMMARY_EVENTS)} takes one"
            )
        return answer.to_result()
    if isinstance(answer, dict):
        try:
            decode_result("lifecycle", answer, event)
        except ProtocolError as exc:
            raise IllegalResult(f"handler returned a bad lifecycle result: {exc}") from None
        return answer
    raise IllegalResult(
        "a lifecycle handler must return a helper such as continue_(), block(), context(), "
        f"a str (context), a dict or None, not {type(answer).__name__}"
    )


def _object(value: Any, helper: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(f"{helper}: a merge patch must be a dict, not {type(value).__name__}")
    return dict(value)


def _text(value: Any, helper: str, what: str = "reason") -> str:
    if not isinstance(value, str):
        raise TypeError(f"{helper}: {what} must be a string, not {type(value).__name__}")
    return value
