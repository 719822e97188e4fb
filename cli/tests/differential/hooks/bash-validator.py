#!/usr/bin/env python3
"""PreToolUse(Bash): a command validator in the style of the one in Claude
Code's hooks documentation (written for this corpus): rules of a regex and
a message; a match exits 2 with the messages on stderr, which the agent
hands to the model."""
import json
import re
import sys

RULES = [
    (r"\bgrep\b(?!.*\|)", "Use 'rg' (ripgrep) instead of 'grep' for better performance"),
    (r"\bfind\s+\S+\s+-name\b", "Use 'rg --files -g pattern' instead of 'find -name'"),
]

try:
    event = json.load(sys.stdin)
except json.JSONDecodeError as e:
    print(f"Error: Invalid JSON input: {e}", file=sys.stderr)
    sys.exit(1)

if event.get("tool_name") != "Bash":
    sys.exit(0)
command = event.get("tool_input", {}).get("command", "")
issues = [message for pattern, message in RULES if re.search(pattern, command)]
if issues:
    for message in issues:
        print(f"• {message}", file=sys.stderr)
    sys.exit(2)
