#!/usr/bin/env python3
"""post_tool_use (shell): after a failing `npm test`, add context."""
import json
import re
import sys

event = json.load(sys.stdin)
cmd = event.get("tool_input", {}).get("cmd", "")
response = event.get("tool_response")
output = response if isinstance(response, str) else json.dumps(response)

failing = re.search(r"(\d+) failing", output or "")
if cmd.startswith("npm test") and failing:
    print(json.dumps({
        "hook_specific_output": {
            "hook_event_name": "post_tool_use",
            "additional_context": f"{failing.group(1)} tests failing: fix them first; "
            "do not skip or delete tests.",
        }
    }))
