#!/usr/bin/env bash
# stop: keep the agent going once if its answer does not report the tests.
# stop_hook_active is set by the host when the previous stop was blocked.
input=$(cat)
[[ "$(jq -r '.stop_hook_active // false' <<<"$input")" == "true" ]] && exit 0
if ! jq -e '.stop_response // "" | ascii_downcase | contains("tests pass")' <<<"$input" >/dev/null; then
  jq -cn '{decision: "block", reason: "Run npm test and report the result before you stop."}'
fi
exit 0
