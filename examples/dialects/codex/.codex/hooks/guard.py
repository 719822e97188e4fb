#!/usr/bin/env python3
"""PreToolUse(Bash): deny `rm -rf`; send `git push` back to the user.

Codex rejects `permissionDecision: "ask"` on PreToolUse (the hook is marked
failed and the call goes ahead), so the push check blocks with exit 2 and a
reason that tells the model to ask instead.
"""
import json
import re
import sys

command = json.load(sys.stdin).get("tool_input", {}).get("command", "")

if re.search(r"(^|[^\w])rm\s+-(rf|fr)(\s|$)", command):
    print(json.dumps({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "rm -rf is not allowed here; remove specific paths.",
        }
    }))
elif re.search(r"(^|[^\w])git\s+push(\s|$)", command):
    print("git push needs the user's go-ahead: ask them, do not push yourself.",
          file=sys.stderr)
    sys.exit(2)
