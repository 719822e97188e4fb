#!/usr/bin/env python3
"""BeforeTool(run_shell_command): allow, except under /etc/, where it exits 2.

The allow is still printed; Gemini CLI reads exit 2 as a block with stderr as
the reason and does not look at stdout then.
"""
import json
import sys

command = json.load(sys.stdin).get("tool_input", {}).get("command", "")
print(json.dumps({"decision": "allow"}))
if "/etc/" in command:
    sys.stderr.write(f"Editing /etc/ from the agent is not allowed: {command}\n")
    sys.exit(2)
