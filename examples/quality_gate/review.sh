#!/bin/sh
# A quality gate for a sub-agent's result (Claude Code's SubagentStop
# input on stdin): it fails, with the feedback on stderr and exit 2, while
# the sub-agent's last message still says TODO.
if grep -q TODO; then
  echo "The result still has a TODO: finish it before you stop." >&2
  exit 2
fi
exit 0
