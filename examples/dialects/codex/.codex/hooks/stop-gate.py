#!/usr/bin/env python3
"""Stop: continue once when the turn ends without the tests having run."""
import json
import sys

event = json.load(sys.stdin)
if event.get("stop_hook_active"):
    sys.exit(0)  # this hook already sent Codex back once
message = event.get("last_assistant_message") or ""
if "tests pass" not in message.lower():
    print(json.dumps({
        "decision": "block",
        "reason": "Run npm test and report the result before you finish.",
    }))
