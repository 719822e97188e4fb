#!/usr/bin/env bash
# beforeShellExecution: deny `rm -rf`, ask before `git push`, allow the rest.
# failClosed in hooks.json: if this script breaks, the command does not run.
set -euo pipefail

cmd=$(jq -r '.command // ""')
rm_rf='(^|[^[:alnum:]_])rm[[:space:]]+-(rf|fr)([[:space:]]|$)'
git_push='(^|[^[:alnum:]_])git[[:space:]]+push([[:space:]]|$)'

if [[ "$cmd" =~ $rm_rf ]]; then
  jq -cn '{permission: "deny",
           user_message: "Blocked rm -rf (project hook).",
           agent_message: "rm -rf is not allowed in this workspace; delete specific files instead."}'
elif [[ "$cmd" =~ $git_push ]]; then
  jq -cn '{permission: "ask",
           user_message: "The agent wants to git push. Allow it?",
           agent_message: "git push needs the user to confirm."}'
else
  echo '{"permission":"allow"}'
fi
