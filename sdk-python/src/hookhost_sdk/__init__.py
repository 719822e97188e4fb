"""hookhost_sdk: write hookhost hooks in a few lines of Python.

    from hookhost_sdk import App, deny

    app = App("guard")

    @app.before_tool
    def guard(call):
        if call.arguments.get("command", "").startswith("sudo "):
            return deny("no sudo")

    app.run()

See the README for every decorator, helper and guarantee.
"""

from . import merge_patch
from .app import App
from .params import LifecycleEvent, LlmRequest, LlmResponse, Meta, RuntimeEvent, ToolCall, ToolOutput
from .results import (
    Decision,
    IllegalResult,
    LifecycleAnswer,
    abort,
    abstain,
    allow,
    approve,
    ask,
    block,
    context,
    continue_,
    deny,
    lifecycle_result,
    modify,
    modify_arguments,
    modify_response,
    modify_result,
    refuse,
    respond,
    summary,
    system_message,
)
from .schema import ProtocolError

__version__ = "0.1.0"

__all__ = [
    "App",
    "Decision",
    "IllegalResult",
    "LifecycleAnswer",
    "LifecycleEvent",
    "LlmRequest",
    "LlmResponse",
    "Meta",
    "ProtocolError",
    "RuntimeEvent",
    "ToolCall",
    "ToolOutput",
    "abort",
    "abstain",
    "allow",
    "approve",
    "ask",
    "block",
    "context",
    "continue_",
    "deny",
    "lifecycle_result",
    "merge_patch",
    "modify",
    "modify_arguments",
    "modify_response",
    "modify_result",
    "refuse",
    "respond",
    "summary",
    "system_message",
]
