#!/usr/bin/env python3
"""before_tool: deny dangerous shell commands.

Rules, in order (the first that matches wins): `sudo`, `rm-recursive-force`,
`mkfs`, `dd`, `fork-bomb`. A command line is split into simple commands at
`;`, `&&`, `||`, `|`, `&` and newlines; a simple command is split into words
at whitespace. This is a tripwire for honest mistakes, not a sandbox: it
does not parse quoting, so pair it with approval for real isolation.
"""

import re
from collections.abc import Callable

from hookhost_sdk import App, Decision, ToolCall, deny

SHELL_TOOLS = {"shell", "bash", "Bash", "exec"}
SEPARATOR = re.compile(r"&&|\|\||[;|&\n]")
FORK_BOMB = ":(){:|:&};:"


def short_flags(words: list[str]) -> str:
    """The letters of every short option cluster (`-rfv` gives `rfv`)."""
    return "".join(w[1:] for w in words if w.startswith("-") and not w.startswith("--"))


def rm_recursive_force(words: list[str]) -> bool:
    if words[0] != "rm":
        return False
    flags = short_flags(words[1:])
    recursive = "--recursive" in words or "r" in flags or "R" in flags
    return recursive and ("--force" in words or "f" in flags)


RULES: list[tuple[str, Callable[[list[str]], bool]]] = [
    ("sudo", lambda words: words[0] == "sudo"),
    ("rm-recursive-force", rm_recursive_force),
    ("mkfs", lambda words: words[0] == "mkfs" or words[0].startswith("mkfs.")),
    ("dd", lambda words: words[0] == "dd" and any(w.startswith("if=") for w in words)),
]


def violated_rule(command: str) -> str | None:
    commands = [words for words in (piece.split() for piece in SEPARATOR.split(command)) if words]
    for rule, matches in RULES:
        if any(matches(words) for words in commands):
            return rule
    if FORK_BOMB in "".join(command.split()):
        return "fork-bomb"
    return None


app = App("guard")


@app.before_tool
def guard(call: ToolCall) -> Decision | None:
    command = call.arguments.get("command")
    if call.tool in SHELL_TOOLS and isinstance(command, str):
        rule = violated_rule(command)
        if rule is not None:
            return deny(f"guard: rule `{rule}` denies this command: {command}")
    return None


if __name__ == "__main__":
    app.run()
