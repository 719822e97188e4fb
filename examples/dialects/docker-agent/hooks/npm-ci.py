#!/usr/bin/env python3
"""pre_tool_use (shell): run a bare `npm install` as `npm ci`.

docker-agent merges updated_input over the tool's arguments, so only `cmd`
is sent.
"""
import json
import re
import sys

cmd = json.load(sys.stdin).get("tool_input", {}).get("cmd", "")
if re.fullmatch(r"\s*npm\s+(install|i)\s*", cmd):
    print(json.dumps({
        "hook_specific_output": {
            "hook_event_name": "pre_tool_use",
            "permission_decision": "allow",
            "updated_input": {"cmd": "npm ci"},
        }
    }))
