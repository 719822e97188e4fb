#!/usr/bin/env bash
# PreToolUse(Bash): refuse recursive force-deletes, ask before pushing.
set -euo pipefail

cmd=$(jq -r '.tool_input.command // ""')

decide() {
  jq -cn --arg d "$1" --arg r "$2" '{
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: $d,
      permissionDecisionReason: $r
    }
  }'
}

rm_rf='(^|[^[:alnum:]_])rm[[:space:]]+-(rf|fr)([[:space:]]|$)'
git_push='(^|[^[:alnum:]_])git[[:space:]]+push([[:space:]]|$)'

if [[ "$cmd" =~ $rm_rf ]]; then
  decide deny "Blocked: 'rm -rf' is not allowed in this repo; delete specific files instead."
elif [[ "$cmd" =~ $git_push ]]; then
  decide ask "git push publishes commits; confirm the branch and remote first."
fi
exit 0
