#!/usr/bin/env bash
# tool_guard (shell): ask before a force push, with metadata for the prompt.
# A guard decides; it cannot rewrite, and if it breaks the call is refused.
set -euo pipefail
cmd=$(jq -r '.tool_input.cmd // ""')
if [[ "$cmd" =~ git[[:space:]]+push.*(--force|-f([[:space:]]|$)) ]]; then
  jq -cn '{hook_specific_output: {permission_decision: "ask",
    permission_decision_reason: "a force push rewrites the remote history",
    metadata: {rule: "no-force-push"}}}'
fi
