"""Typed views of the params each stage receives.

Each view *is* the params dict (a ``dict`` subclass), so ``call["tool"]``
and ``json.dumps(call)`` work as they would on the raw object, and unknown
keys are all there. The properties only add names, types and the spec's
defaults for absent members (``arguments`` absent means ``{}``). The SDK has
checked the shapes before a handler sees them, so the types hold.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Meta", "ToolCall", "ToolOutput", "LlmRequest", "LlmResponse", "LifecycleEvent", "RuntimeEvent", "Hello"]

#: ``meta`` / ``scope``: agent_id, session_key, turn_id, parent_turn_id, iteration, source,
#: transcript_path, cwd, permission_mode, model, tenant_id, user_id.
Meta = dict[str, Any]


class _Common(dict[str, Any]):
    __slots__ = ()

    @property
    def meta(self) -> Meta:
        """Where the call comes from; ``{}`` when the agent said nothing."""
        return self.get("meta") or {}

    @property
    def channel(self) -> str | None:
        return self.get("channel")

    @property
    def chat_id(self) -> str | None:
        return self.get("chat_id")


class ToolCall(_Common):
    """Params of ``before_tool`` and ``approve_tool``."""

    __slots__ = ()

    @property
    def tool(self) -> str:
        return self["tool"]  # type: ignore[no-any-return]

    @property
    def arguments(self) -> dict[str, Any]:
        return self.get("arguments") or {}

    @property
    def tool_call_id(self) -> str | None:
        return self.get("tool_call_id")


class ToolOutput(ToolCall):
    """Params of ``after_tool``: the call and what the tool produced."""

    __slots__ = ()

    @property
    def result(self) -> dict[str, Any]:
        """The tool result: ``for_llm`` and maybe ``for_user``, ``silent``, ``is_error``."""
        return self["result"]  # type: ignore[no-any-return]

    @property
    def for_llm(self) -> str:
        return self["result"]["for_llm"]  # type: ignore[no-any-return]

    @property
    def for_user(self) -> str | None:
        return self["result"].get("for_user")  # type: ignore[no-any-return]

    @property
    def is_error(self) -> bool:
        return bool(self["result"].get("is_error"))

    @property
    def duration_ms(self) -> int | None:
        return self.get("duration_ms")


class LlmRequest(_Common):
    """Params of ``before_llm``: the request about to go to the model."""

    __slots__ = ()

    @property
    def model(self) -> str:
        return self["model"]  # type: ignore[no-any-return]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.get("messages") or []

    @property
    def tools(self) -> list[Any]:
        return self.get("tools") or []

    @property
    def options(self) -> dict[str, Any]:
        return self.get("options") or {}


class LlmResponse(_Common):
    """Params of ``after_llm``: the model's answer."""

    __slots__ = ()

    @property
    def model(self) -> str:
        return self["model"]  # type: ignore[no-any-return]

    @property
    def response(self) -> dict[str, Any]:
        return self["response"]  # type: ignore[no-any-return]

    @property
    def content(self) -> str:
        return self["response"].get("content") or ""

    @property
    def tool_calls(self) -> list[Any]:
        return self["response"].get("tool_calls") or []


class LifecycleEvent(dict[str, Any]):
    """Params of ``hook.lifecycle``: which event, its payload and where it comes from."""

    __slots__ = ()

    @property
    def event(self) -> str:
        """The request event: session_start, user_prompt_submit, turn_start, ..."""
        return self["event"]  # type: ignore[no-any-return]

    @property
    def payload(self) -> dict[str, Any]:
        """The event's details (``{}`` when absent); keys depend on the event."""
        return self.get("payload") or {}

    @property
    def meta(self) -> Meta:
        return self.get("meta") or {}

    @property
    def prompt(self) -> str | None:
        """user_prompt_submit: the prompt (``payload.prompt``), when it is a string."""
        value = self.payload.get("prompt")
        return value if isinstance(value, str) else None


class RuntimeEvent(dict[str, Any]):
    """Params of a ``hook.runtime_event`` notification."""

    __slots__ = ()

    @property
    def id(self) -> str:
        return self["id"]  # type: ignore[no-any-return]

    @property
    def kind(self) -> str:
        return self["kind"]  # type: ignore[no-any-return]

    @property
    def time(self) -> str:
        return self["time"]  # type: ignore[no-any-return]

    @property
    def payload(self) -> Any:
        return self["payload"]

    @property
    def source(self) -> str | None:
        return self.get("source")

    @property
    def scope(self) -> Meta:
        return self.get("scope") or {}

    @property
    def severity(self) -> str | None:
        return self.get("severity")


class Hello(dict[str, Any]):
    """Params of ``hook.hello`` (the SDK answers it; kept for ``App.hello_params``)."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return self["name"]  # type: ignore[no-any-return]

    @property
    def version(self) -> int:
        return self["version"]  # type: ignore[no-any-return]
