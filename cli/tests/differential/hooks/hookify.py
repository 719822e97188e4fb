#!/usr/bin/env python3
"""PreToolUse: a rule-file reader in the style of the hookify plugin
(written for this corpus). Rules are `.claude/hookify.*.local.md` files of
the project the agent works in (found from the working folder, as hookify
does), each with a front matter of `event`, `pattern` and `action`
(`block` or `warn`) and the message as its body."""
import glob
import json
import os
import re
import sys

event = json.load(sys.stdin)
command = json.dumps(event.get("tool_input", {}))
found = []
for path in sorted(glob.glob(os.path.join(os.getcwd(), ".claude", "hookify.*.local.md"))):
    text = open(path, encoding="utf-8").read()
    head, _, body = text.partition("\n---\n")
    fields = dict(
        line.split(":", 1) for line in head.splitlines() if ":" in line
    )
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    if fields.get("enabled", "true") != "true":
        continue
    if re.search(fields.get("pattern", "$^"), command):
        found.append((fields.get("action", "warn"), body.strip()))

blocks = [m for a, m in found if a == "block"]
warns = [m for a, m in found if a != "block"]
if blocks:
    print(json.dumps({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "\n".join(blocks),
        },
        "systemMessage": "hookify blocked this: " + "\n".join(blocks),
    }))
elif warns:
    print(json.dumps({"systemMessage": "hookify: " + "\n".join(warns)}))
