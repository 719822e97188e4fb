#!/usr/bin/env python3
"""A project's policy for Claude Code, as one warm hookhost hook: it rewrites
`echo original` commands, gives every prompt the project's context, and asks
for the tests once before the session may stop."""

from hookhost_sdk import App, Decision, LifecycleAnswer, LifecycleEvent, ToolCall, block, context, modify_arguments

app = App("policy")


@app.before_tool
def rewrite(call: ToolCall) -> Decision | None:
    command = call.arguments.get("command")
    if isinstance(command, str) and "echo original" in command:
        return modify_arguments(command=command.replace("echo original", "echo rewritten"))
    return None


@app.lifecycle("user_prompt_submit", "stop")
def lifecycle(event: LifecycleEvent) -> LifecycleAnswer | None:
    if event.event == "user_prompt_submit":
        return context("CTX-MARKER-7: this project builds with make")
    if not event.payload.get("stop_hook_active"):
        return block("STOP-MARKER-9: run the tests before you stop")
    return None


if __name__ == "__main__":
    app.run()
