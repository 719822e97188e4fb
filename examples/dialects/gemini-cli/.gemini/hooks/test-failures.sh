#!/usr/bin/env bash
# AfterTool(run_shell_command): after a failing `npm test`, add context.
input=$(cat)
cmd=$(jq -r '.tool_input.command // ""' <<<"$input")
out=$(jq -r '.tool_response.llmContent // "" | tostring' <<<"$input")
if [[ "$cmd" == "npm test"* ]] && [[ "$out" =~ ([0-9]+)\ failing ]]; then
  jq -cn --arg n "${BASH_REMATCH[1]}" '{
    hookSpecificOutput: {
      hookEventName: "AfterTool",
      additionalContext: "\($n) tests failing: fix them before anything else; do not skip tests."
    }
  }'
fi
exit 0
