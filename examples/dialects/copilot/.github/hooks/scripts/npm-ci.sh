#!/usr/bin/env bash
# preToolUse: for the bash tool, a bare `npm install` becomes `npm ci`.
# modifiedArgs is the full argument object the tool runs with.
set -euo pipefail

input=$(cat)
[[ "$(jq -r '.toolName' <<<"$input")" == "bash" ]] || exit 0
args=$(jq -c '.toolArgs | if type == "string" then fromjson else . end' <<<"$input")
cmd=$(jq -r '.command // ""' <<<"$args")

if [[ "$cmd" =~ ^[[:space:]]*npm[[:space:]]+(install|i)[[:space:]]*$ ]]; then
  jq -c '{permissionDecision: "allow", modifiedArgs: (. + {command: "npm ci"})}' <<<"$args"
fi
