#!/usr/bin/env python3
"""PreToolUse(Bash): a bare `npm install` becomes `npm ci` (lockfile-exact)."""
import json
import re
import sys

event = json.load(sys.stdin)
tool_input = event.get("tool_input", {})
command = tool_input.get("command", "")

if re.fullmatch(r"\s*npm\s+(install|i)\s*", command):
    # updatedInput replaces the whole input, so keep the other fields.
    updated = dict(tool_input, command="npm ci")
    print(json.dumps({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "use the lockfile: npm ci",
            "updatedInput": updated,
        }
    }))
