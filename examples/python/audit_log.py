#!/usr/bin/env python3
"""Observe every `agent.*` runtime event and append it as one JSON line to
the file named by AUDIT_LOG_FILE, flushed per line so a crash loses nothing.

Event handlers run one at a time in arrival order, so lines keep the order
the agent emitted them in.
"""

import json
import os
import sys
from typing import TextIO

from hookhost_sdk import App, RuntimeEvent

PATH = os.environ.get("AUDIT_LOG_FILE", "")
if not PATH:
    print("audit_log: AUDIT_LOG_FILE is not set; events will not be recorded", file=sys.stderr)

app = App("audit_log")
log_file: TextIO | None = None


@app.on_event("agent.*")
def audit(event: RuntimeEvent) -> None:
    global log_file
    if not PATH:
        return
    if log_file is None:  # opened on first use, so a start alone creates no file
        log_file = open(PATH, "a", encoding="utf-8")
    log_file.write(json.dumps(event, ensure_ascii=False) + "\n")
    log_file.flush()


if __name__ == "__main__":
    app.run()
