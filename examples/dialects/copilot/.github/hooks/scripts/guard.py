#!/usr/bin/env python3
"""preToolUse: deny `rm -rf`, ask before `git push`, for the bash tool.

Copilot CLI hands toolArgs over as a JSON string; it is decoded once here.
Saying nothing (empty stdout) leaves the call to Copilot's defaults.
"""
import json
import re
import sys

event = json.load(sys.stdin)
if event.get("toolName") != "bash":
    sys.exit(0)
args = event.get("toolArgs") or {}
if isinstance(args, str):
    args = json.loads(args)
command = args.get("command", "")

if re.search(r"(^|[^\w])rm\s+-(rf|fr)(\s|$)", command):
    print(json.dumps({
        "permissionDecision": "deny",
        "permissionDecisionReason": "rm -rf is blocked in this repository.",
    }))
elif re.search(r"(^|[^\w])git\s+push(\s|$)", command):
    print(json.dumps({
        "permissionDecision": "ask",
        "permissionDecisionReason": "Pushing publishes commits; please confirm.",
    }))
