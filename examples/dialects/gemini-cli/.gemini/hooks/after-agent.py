#!/usr/bin/env python3
"""AfterAgent: refuse the answer once (decision "deny" retries the turn with
the reason) when it does not say the tests pass; never twice in a row."""
import json
import sys

event = json.load(sys.stdin)
if event.get("stop_hook_active"):
    sys.exit(0)
if "tests pass" not in (event.get("prompt_response") or "").lower():
    print(json.dumps({
        "decision": "deny",
        "reason": "Run npm test and report the result before you finish.",
    }))
