"""The one-shot guard of the comparison, docker-agent / Claude Code style:
read one JSON object on stdin, allow it (exit 0)."""

import json
import sys

json.load(sys.stdin)
sys.exit(0)
