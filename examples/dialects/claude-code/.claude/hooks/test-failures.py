#!/usr/bin/env python3
"""PostToolUse(Bash): after a failing `npm test`, point Claude at the failures."""
import json
import re
import sys

event = json.load(sys.stdin)
command = event.get("tool_input", {}).get("command", "")
output = json.dumps(event.get("tool_response", {}))

match = re.search(r"(\d+) failing", output)
if command.startswith("npm test") and match:
    print(json.dumps({
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": f"{match.group(1)} tests failing: fix them before "
            "you edit anything else, and do not skip or delete tests.",
        }
    }))
