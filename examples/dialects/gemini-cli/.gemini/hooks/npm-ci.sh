#!/usr/bin/env bash
# BeforeTool(run_shell_command): `npm install` -> `npm ci`. Gemini runs
# hookSpecificOutput.tool_input as the call's whole new arguments (its docs
# say it merges; 0.61.0 does not), so the `description` it leaves out is gone.
cmd=$(jq -r '.tool_input.command // ""')
if [[ "$cmd" =~ ^[[:space:]]*npm[[:space:]]+(install|i)[[:space:]]*$ ]]; then
  jq -cn '{
    decision: "allow",
    hookSpecificOutput: { hookEventName: "BeforeTool", tool_input: { command: "npm ci" } }
  }'
fi
exit 0
