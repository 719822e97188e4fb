#!/usr/bin/env bash
# PreToolUse(Bash): allow by default, but exit 2 for anything under /etc/.
# The allow stays on stdout; exit 2 is what Codex acts on.
cmd=$(jq -r '.tool_input.command // ""')
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'
case "$cmd" in
  */etc/*)
    echo "system config under /etc/ is off limits: $cmd" >&2
    exit 2
    ;;
esac
exit 0
