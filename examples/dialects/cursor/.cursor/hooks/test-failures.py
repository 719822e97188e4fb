#!/usr/bin/env python3
"""postToolUse (Shell): after a failing `npm test`, add context for the agent."""
import json
import re
import sys

event = json.load(sys.stdin)
command = (event.get("tool_input") or {}).get("command", "")
output = event.get("tool_output")
output = output if isinstance(output, str) else json.dumps(output)

answer = {}
failing = re.search(r"(\d+) failing", output)
if command.startswith("npm test") and failing:
    answer["additional_context"] = (
        f"{failing.group(1)} tests failing: fix them before moving on; never skip a test."
    )
print(json.dumps(answer))
