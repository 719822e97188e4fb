#!/usr/bin/env python3
"""PreToolUse: the project's own policy file decides. It reads
$CLAUDE_PROJECT_DIR/policy.json ({"deny": [substring, ...], "context":
text}) and answers in JSON: a deny with the reason, else the context."""
import json
import os
import sys

event = json.load(sys.stdin)
root = os.environ.get("CLAUDE_PROJECT_DIR") or os.environ.get("GEMINI_PROJECT_DIR") or "."
with open(os.path.join(root, "policy.json"), encoding="utf-8") as f:
    policy = json.load(f)
command = event.get("tool_input", {}).get("command", "")
hit = [d for d in policy.get("deny", []) if d in command]
name = event.get("hook_event_name", "PreToolUse")
if hit:
    print(json.dumps({"hookSpecificOutput": {"hookEventName": name,
        "permissionDecision": "deny",
        "permissionDecisionReason": f"project policy forbids {hit[0]!r}"}}))
else:
    print(json.dumps({"hookSpecificOutput": {"hookEventName": name,
        "additionalContext": policy.get("context", "")}}))
