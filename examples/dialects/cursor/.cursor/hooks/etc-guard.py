#!/usr/bin/env python3
"""beforeShellExecution: answers allow, but exits 2 for commands touching /etc/.

For Cursor, exit 2 denies the command whatever the JSON on stdout says.
"""
import json
import sys

command = json.load(sys.stdin).get("command", "")
print(json.dumps({"permission": "allow"}))
if "/etc/" in command:
    print(f"the agent may not change /etc/: {command}", file=sys.stderr)
    sys.exit(2)
