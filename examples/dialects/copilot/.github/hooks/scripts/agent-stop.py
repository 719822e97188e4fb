#!/usr/bin/env python3
"""agentStop: once per stop, send the agent back to run the tests.

Copilot's payload has no loop flag; the script honours `stopHookActive` when
the runner sends one (the stop just before was blocked), so it blocks once.
"""
import json
import sys

event = json.load(sys.stdin)
if event.get("stopHookActive"):
    sys.exit(0)
print(json.dumps({
    "decision": "block",
    "reason": "Run npm test and report the result before you stop.",
}))
