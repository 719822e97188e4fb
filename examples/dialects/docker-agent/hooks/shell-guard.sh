#!/usr/bin/env bash
# pre_tool_use (shell): deny `rm -rf`, ask before `git push`.
set -euo pipefail

cmd=$(jq -r '.tool_input.cmd // ""')
rm_rf='(^|[^[:alnum:]_])rm[[:space:]]+-(rf|fr)([[:space:]]|$)'
git_push='(^|[^[:alnum:]_])git[[:space:]]+push([[:space:]]|$)'

answer() {
  jq -cn --arg d "$1" --arg r "$2" '{hook_specific_output: {
    hook_event_name: "pre_tool_use", permission_decision: $d, permission_decision_reason: $r}}'
}

if [[ "$cmd" =~ $rm_rf ]]; then
  answer deny "rm -rf is not allowed; remove the paths you mean one by one."
elif [[ "$cmd" =~ $git_push ]]; then
  answer ask "git push leaves the machine; the user has to confirm it."
fi
