#!/usr/bin/env bash
# Stop: send Claude back once if it stops without having run the tests.
set -euo pipefail

input=$(cat)
if [[ "$(jq -r '.stop_hook_active' <<<"$input")" == "true" ]]; then
  exit 0   # already continued once because of this hook: let it stop
fi
last=$(jq -r '.last_assistant_message // ""' <<<"$input")
if ! grep -qi 'tests pass' <<<"$last"; then
  jq -cn '{decision: "block", reason: "Run npm test and report the result before you stop."}'
fi
exit 0
