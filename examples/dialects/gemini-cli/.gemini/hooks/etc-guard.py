#!/usr/bin/env python3
"""BeforeTool(run_shell_command): allow, except under /etc/, where it exits 2.

Gemini CLI reads JSON on stdout whatever the exit code, so a block prints no
JSON: exit 2 with the reason alone (on stderr) is a refusal.
"""
import json
import sys

command = json.load(sys.stdin).get("tool_input", {}).get("command", "")
if "/etc/" in command:
    sys.stderr.write(f"Editing /etc/ from the agent is not allowed: {command}\n")
    sys.exit(2)
print(json.dumps({"decision": "allow"}))
