#!/usr/bin/env python3
"""before_tool: rewrite a bare `ls` to `ls -h`, the smallest useful rewrite.

The answer is a merge patch of the call's arguments, so any other argument
(say `cwd`) and any other hook's rewrite survive.
"""

from hookhost_sdk import App, Decision, ToolCall, modify_arguments

SHELL_TOOLS = {"shell", "bash", "Bash", "exec"}

app = App("ls_human")


@app.before_tool
def ls_human(call: ToolCall) -> Decision | None:
    command = call.arguments.get("command")
    if call.tool in SHELL_TOOLS and isinstance(command, str) and command.strip() == "ls":
        return modify_arguments(command="ls -h")
    return None


if __name__ == "__main__":
    app.run()
