#!/usr/bin/env bash
# PreToolUse(Bash): exit 2 for anything under /etc/, nothing otherwise.
# Codex takes `allow` only with a rewrite (updatedInput) and marks a bare
# allow a failed hook, so letting a call through is saying nothing.
cmd=$(jq -r '.tool_input.command // ""')
case "$cmd" in
  */etc/*)
    echo "system config under /etc/ is off limits: $cmd" >&2
    exit 2
    ;;
esac
exit 0
